#include "testing/fake_queue.hpp"

#include <algorithm>

#include "event/wait_queue.hpp"

namespace ic::testing {

using consumer::BatchResult;
using consumer::DeleteEntry;
using consumer::Message;
using consumer::MessageAttributes;
using consumer::VisibilityEntry;

namespace {

// How often a long poll with nothing to deliver looks again (real time, not queue time).
constexpr Millis kRecheck{5};

Error invalid_handle(std::string_view handle) {
  return {.error_class = ErrorClass::Permanent,
          .code = "ReceiptHandleIsInvalid",
          .message = "unknown receipt handle " + std::string(handle)};
}

}  // namespace

FakeQueue::SteadyClock::duration FakeQueue::scaled(std::chrono::seconds seconds) const {
  return options_.second * seconds.count();
}

Message FakeQueue::deliver(const std::string& id, Stored& stored, SteadyClock::time_point now) {
  stored.receive_count++;
  stored.visible_at = now + scaled(options_.visibility_timeout);
  std::string handle = "rh-" + id + "-" + std::to_string(next_handle_++);
  handles_.emplace(handle, id);
  const auto sent_ms = stored.sent_at.time_since_epoch().count();
  return Message{.message_id = id,
                 .receipt_handle = std::move(handle),
                 .body = stored.body,
                 .receive_count = stored.receive_count,
                 .sent_at = stored.sent_at,
                 .attributes = {{"ApproximateReceiveCount", std::to_string(stored.receive_count)},
                                {"SentTimestamp", std::to_string(sent_ms)}},
                 .message_attributes = stored.attributes};
}

FakeQueue::Stored* FakeQueue::by_handle(std::string_view receipt_handle) {
  auto handle = handles_.find(receipt_handle);
  if (handle == handles_.end()) return nullptr;
  return &messages_.find(handle->second)->second;
}

std::vector<Message> FakeQueue::deliver_visible(int max_messages) {
  MutexLock lock(mutex_);
  const auto now = SteadyClock::now();
  std::vector<Message> out;
  for (const auto& id : order_) {
    if (std::ssize(out) >= max_messages) break;
    auto& stored = messages_.find(id)->second;
    if (!stored.deleted && stored.visible_at <= now) out.push_back(deliver(id, stored, now));
  }
  if (duplicate_next_ && !out.empty() && std::ssize(out) < max_messages) {
    duplicate_next_ = false;
    const std::string id = out.front().message_id;
    out.push_back(deliver(id, messages_.find(id)->second, now));
  }
  return out;
}

Task<FakeQueue::Received> FakeQueue::receive(int max_messages, std::chrono::seconds wait,
                                             std::stop_token stop) {
  {
    MutexLock lock(mutex_);
    receive_requests_.push_back(max_messages);
  }
  const auto deadline = SteadyClock::now() + scaled(wait);
  for (;;) {
    std::vector<Message> out = deliver_visible(max_messages);
    if (!out.empty() || SteadyClock::now() >= deadline) co_return out;
    // Neither a send nor a visibility expiry wakes the poll: it looks again now and then.
    const bool slept = co_await event::loop_sleeper().sleep_for(kRecheck, stop);
    if (!slept) co_return out;  // stopped (or no loop to wait on)
  }
}

Task<FakeQueue::BatchReply> FakeQueue::delete_batch(std::span<const DeleteEntry> entries) {
  MutexLock lock(mutex_);
  delete_calls_.emplace_back(entries.begin(), entries.end());
  BatchResult result;
  for (const auto& entry : entries) {
    if (auto* stored = by_handle(entry.receipt_handle)) {
      stored->deleted = true;  // like SQS: deleting twice, or with an older handle, succeeds
      result.emplace_back();
    } else {
      result.emplace_back(std::unexpected(invalid_handle(entry.receipt_handle)));
    }
  }
  co_return result;
}

Task<FakeQueue::BatchReply> FakeQueue::change_visibility_batch(
    std::span<const VisibilityEntry> entries) {
  MutexLock lock(mutex_);
  visibility_calls_.emplace_back(entries.begin(), entries.end());
  BatchResult result;
  const auto now = SteadyClock::now();
  for (const auto& entry : entries) {
    auto* stored = by_handle(entry.receipt_handle);
    if (stored == nullptr || stored->deleted) {
      result.emplace_back(std::unexpected(invalid_handle(entry.receipt_handle)));
    } else {
      stored->visible_at = now + scaled(entry.timeout);
      result.emplace_back();
    }
  }
  co_return result;
}

Task<std::expected<void, Error>> FakeQueue::send_to_dlq(std::string_view body,
                                                        const MessageAttributes& attributes) {
  MutexLock lock(mutex_);
  dead_lettered_.push_back({std::string(body), attributes});
  co_return std::expected<void, Error>{};
}

std::string FakeQueue::send(std::string body, MessageAttributes attributes) {
  std::string id;
  {
    MutexLock lock(mutex_);
    id = "msg-" + std::to_string(next_id_++);
    messages_.emplace(
        id,
        Stored{.body = std::move(body),
               .attributes = std::move(attributes),
               .sent_at = std::chrono::time_point_cast<Millis>(std::chrono::system_clock::now()),
               .visible_at = SteadyClock::now()});
    order_.push_back(id);
  }
  return id;
}

void FakeQueue::duplicate_next_delivery() {
  MutexLock lock(mutex_);
  duplicate_next_ = true;
}

std::size_t FakeQueue::remaining() const {
  MutexLock lock(mutex_);
  return static_cast<std::size_t>(
      std::ranges::count_if(messages_, [](const auto& item) { return !item.second.deleted; }));
}

std::size_t FakeQueue::visible() const {
  MutexLock lock(mutex_);
  const auto now = SteadyClock::now();
  return static_cast<std::size_t>(std::ranges::count_if(messages_, [&](const auto& item) {
    return !item.second.deleted && item.second.visible_at <= now;
  }));
}

bool FakeQueue::deleted(std::string_view message_id) const {
  MutexLock lock(mutex_);
  auto it = messages_.find(message_id);
  return it != messages_.end() && it->second.deleted;
}

std::vector<DeadLettered> FakeQueue::dead_lettered() const {
  MutexLock lock(mutex_);
  return dead_lettered_;
}

std::vector<int> FakeQueue::receive_requests() const {
  MutexLock lock(mutex_);
  return receive_requests_;
}

std::vector<std::vector<DeleteEntry>> FakeQueue::delete_calls() const {
  MutexLock lock(mutex_);
  return delete_calls_;
}

std::vector<std::vector<VisibilityEntry>> FakeQueue::visibility_calls() const {
  MutexLock lock(mutex_);
  return visibility_calls_;
}

std::vector<consumer::VisibilityEntry> FakeQueue::visibility_entries() const {
  std::vector<consumer::VisibilityEntry> out;
  for (const auto& call : visibility_calls()) out.insert(out.end(), call.begin(), call.end());
  return out;
}

}  // namespace ic::testing
