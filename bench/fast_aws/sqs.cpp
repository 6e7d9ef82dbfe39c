// SQS's dispatch, its timer thread and its shutdown (sqs.hpp); the operations are in
// sqs_queues.cpp, sqs_send.cpp, sqs_receive.cpp and sqs_receipts.cpp.
#include "fast_aws/sqs.hpp"

#include <algorithm>

#include "fast_aws/request_members.hpp"
#include "fast_aws/sqs_faults.hpp"

namespace ic::bench::fast_aws {

std::optional<Reply> Sqs::handle(std::string_view operation, const nlohmann::json& request,
                                 Request& http) {
  if (operation == "ReceiveMessage") return receive(request, http);
  if (operation == "DeleteMessageBatch") return delete_batch(request);
  if (operation == "ChangeMessageVisibilityBatch") return change_visibility_batch(request);
  if (operation == "SendMessageBatch") return send_batch(request);
  if (operation == "SendMessage") return send(request);
  if (operation == "DeleteMessage") return delete_message(request);
  if (operation == "ChangeMessageVisibility") return change_visibility(request);
  if (operation == "GetQueueAttributes") return get_queue_attributes(request);
  if (operation == "SetQueueAttributes") return set_queue_attributes(request);
  if (operation == "GetQueueUrl") return get_queue_url(request);
  if (operation == "CreateQueue") return create_queue(request);
  return unknown_operation(std::string("AmazonSQS.") + std::string(operation));
}

void Sqs::run_timers() {
  std::unique_lock lock(mutex_);
  while (!stopping_) {
    const auto now = Steady::now();
    auto next = Steady::time_point::max();
    std::vector<MHD_Connection*> wake;
    for (auto& entry : queues_) {
      Queue& queue = *entry.second;
      if (queue.waiters.empty()) continue;
      promote(queue, now);
      take_waiters(queue, queue.count(MessageState::Visible), wake);
      std::erase_if(queue.waiters, [&](Request* waiter) {
        if (*waiter->poll_deadline > now) return false;
        wake.push_back(waiter->connection);
        return true;
      });
      for (const Request* waiter : queue.waiters) next = std::min(next, *waiter->poll_deadline);
      if (!queue.waiters.empty() && !queue.timers.empty()) {
        next = std::min(next, queue.timers.top().due);
      }
    }
    if (!wake.empty()) {
      lock.unlock();
      resume(wake);
      lock.lock();
      continue;
    }
    if (next == Steady::time_point::max()) {
      timers_changed_.wait(lock);
    } else {
      timers_changed_.wait_until(lock, next);
    }
  }
}

void Sqs::stop() {
  std::vector<MHD_Connection*> wake;
  {
    const std::scoped_lock lock(mutex_);
    stopping_ = true;
    for (auto& entry : queues_) {
      for (Request* waiter : entry.second->waiters) wake.push_back(waiter->connection);
      entry.second->waiters.clear();
    }
  }
  timers_changed_.notify_all();
  resume(wake);
}

std::expected<Queue*, Reply> Sqs::queue_of(const nlohmann::json& request) {
  const std::string* url = string_member(request, "QueueUrl");
  if (url == nullptr) {
    return std::unexpected(sqs_error(kMissingParameter, "The request must contain QueueUrl."));
  }
  const auto slash = url->rfind('/');
  const std::string_view name = slash == std::string::npos
                                    ? std::string_view(*url)
                                    : std::string_view(*url).substr(slash + 1);
  const auto it = queues_.find(std::string(name));
  if (it == queues_.end()) {
    return std::unexpected(sqs_error(kQueueDoesNotExist, "The specified queue does not exist."));
  }
  return it->second.get();
}

}  // namespace ic::bench::fast_aws
