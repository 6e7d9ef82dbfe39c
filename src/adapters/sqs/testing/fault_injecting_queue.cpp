#include "adapters/sqs/testing/fault_injecting_queue.hpp"

namespace ic::consumer::testing {

void FaultInjectingQueue::Fault::arm(int count, QueueError error) {
  MutexLock lock(mutex_);
  remaining_ = count;
  error_ = std::move(error);
}

std::optional<QueueError> FaultInjectingQueue::Fault::take() {
  MutexLock lock(mutex_);
  if (remaining_ <= 0) return std::nullopt;
  --remaining_;
  return error_;
}

void FaultInjectingQueue::fail_receives(int calls, QueueError error) {
  receive_.arm(calls, std::move(error));
}

void FaultInjectingQueue::fail_delete_calls(int calls, QueueError error) {
  delete_call_.arm(calls, std::move(error));
}

void FaultInjectingQueue::fail_dlq_sends(int calls, QueueError error) {
  dlq_.arm(calls, std::move(error));
}

void FaultInjectingQueue::fail_delete_entries(int entries, QueueError error) {
  delete_entry_.arm(entries, std::move(error));
}

void FaultInjectingQueue::fail_visibility_entries(int entries, QueueError error) {
  visibility_entry_.arm(entries, std::move(error));
}

template <class Entry, class Call>
std::expected<BatchResult, QueueError> FaultInjectingQueue::with_entry_faults(
    std::span<const Entry> entries, Fault& fault, Call call) {
  BatchResult result(entries.size());
  std::vector<Entry> passed;
  std::vector<std::size_t> positions;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    if (auto error = fault.take()) {
      result[i] = std::unexpected(*error);
    } else {
      passed.push_back(entries[i]);
      positions.push_back(i);
    }
  }
  if (passed.empty()) return result;
  auto inner = call(std::span<const Entry>(passed));
  if (!inner) return std::unexpected(inner.error());
  for (std::size_t j = 0; j < positions.size() && j < inner->size(); ++j) {
    result[positions[j]] = (*inner)[j];
  }
  return result;
}

std::expected<std::vector<Message>, QueueError> FaultInjectingQueue::receive(
    int max_messages, std::chrono::seconds wait) {
  if (auto error = receive_.take()) return std::unexpected(*error);
  return inner_.receive(max_messages, wait);
}

std::expected<BatchResult, QueueError> FaultInjectingQueue::delete_batch(
    std::span<const DeleteEntry> entries) {
  if (auto error = delete_call_.take()) return std::unexpected(*error);
  return with_entry_faults(entries, delete_entry_, [this](std::span<const DeleteEntry> rest) {
    return inner_.delete_batch(rest);
  });
}

std::expected<BatchResult, QueueError> FaultInjectingQueue::change_visibility_batch(
    std::span<const VisibilityEntry> entries) {
  return with_entry_faults(entries, visibility_entry_,
                           [this](std::span<const VisibilityEntry> rest) {
                             return inner_.change_visibility_batch(rest);
                           });
}

std::expected<void, QueueError> FaultInjectingQueue::send_to_dlq(
    std::string_view body, const MessageAttributes& attributes) {
  if (auto error = dlq_.take()) return std::unexpected(*error);
  return inner_.send_to_dlq(body, attributes);
}

}  // namespace ic::consumer::testing
