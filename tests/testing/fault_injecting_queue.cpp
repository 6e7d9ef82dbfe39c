#include "testing/fault_injecting_queue.hpp"

namespace ic::testing {

using consumer::BatchResult;
using consumer::DeleteEntry;
using consumer::Message;
using consumer::MessageAttributes;
using consumer::VisibilityEntry;

void FaultInjectingQueue::Fault::arm(int count, Error error) {
  MutexLock lock(mutex_);
  remaining_ = count;
  error_ = std::move(error);
}

std::optional<Error> FaultInjectingQueue::Fault::take() {
  MutexLock lock(mutex_);
  if (remaining_ <= 0) return std::nullopt;
  --remaining_;
  return error_;
}

void FaultInjectingQueue::fail_receives(int calls, Error error) {
  receive_.arm(calls, std::move(error));
}

void FaultInjectingQueue::fail_delete_calls(int calls, Error error) {
  delete_call_.arm(calls, std::move(error));
}

void FaultInjectingQueue::fail_dlq_sends(int calls, Error error) {
  dlq_.arm(calls, std::move(error));
}

void FaultInjectingQueue::fail_delete_entries(int entries, Error error) {
  delete_entry_.arm(entries, std::move(error));
}

void FaultInjectingQueue::fail_visibility_entries(int entries, Error error) {
  visibility_entry_.arm(entries, std::move(error));
}

template <class Entry, class Call>
Task<FaultInjectingQueue::BatchReply> FaultInjectingQueue::with_entry_faults(
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
  if (passed.empty()) co_return result;
  auto inner = co_await call(std::span<const Entry>(passed));
  if (!inner) co_return std::unexpected(inner.error());
  for (std::size_t j = 0; j < positions.size() && j < inner->size(); ++j) {
    result[positions[j]] = (*inner)[j];
  }
  co_return result;
}

Task<FaultInjectingQueue::Received> FaultInjectingQueue::receive(int max_messages,
                                                                 std::chrono::seconds wait,
                                                                 std::stop_token stop) {
  if (auto error = receive_.take()) co_return std::unexpected(*error);
  auto received = co_await ForwardingQueue::receive(max_messages, wait, std::move(stop));
  co_return received;
}

Task<FaultInjectingQueue::BatchReply> FaultInjectingQueue::delete_batch(
    std::span<const DeleteEntry> entries) {
  if (auto error = delete_call_.take()) co_return std::unexpected(*error);
  auto reply = co_await with_entry_faults(
      entries, delete_entry_,
      [this](std::span<const DeleteEntry> rest) { return ForwardingQueue::delete_batch(rest); });
  co_return reply;
}

Task<FaultInjectingQueue::BatchReply> FaultInjectingQueue::change_visibility_batch(
    std::span<const VisibilityEntry> entries) {
  return with_entry_faults(entries, visibility_entry_,
                           [this](std::span<const VisibilityEntry> rest) {
                             return ForwardingQueue::change_visibility_batch(rest);
                           });
}

Task<std::expected<void, Error>> FaultInjectingQueue::send_to_dlq(
    std::string_view body, const MessageAttributes& attributes) {
  if (auto error = dlq_.take()) co_return std::unexpected(*error);
  auto sent = co_await ForwardingQueue::send_to_dlq(body, attributes);
  co_return sent;
}

}  // namespace ic::testing
