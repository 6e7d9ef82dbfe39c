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
std::expected<BatchResult, Error> FaultInjectingQueue::with_entry_faults(
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

std::expected<std::vector<Message>, Error> FaultInjectingQueue::receive(int max_messages,
                                                                        std::chrono::seconds wait) {
  if (auto error = receive_.take()) return std::unexpected(*error);
  return ForwardingQueue::receive(max_messages, wait);
}

std::expected<BatchResult, Error> FaultInjectingQueue::delete_batch(
    std::span<const DeleteEntry> entries) {
  if (auto error = delete_call_.take()) return std::unexpected(*error);
  return with_entry_faults(entries, delete_entry_, [this](std::span<const DeleteEntry> rest) {
    return ForwardingQueue::delete_batch(rest);
  });
}

std::expected<BatchResult, Error> FaultInjectingQueue::change_visibility_batch(
    std::span<const VisibilityEntry> entries) {
  return with_entry_faults(entries, visibility_entry_,
                           [this](std::span<const VisibilityEntry> rest) {
                             return ForwardingQueue::change_visibility_batch(rest);
                           });
}

std::expected<void, Error> FaultInjectingQueue::send_to_dlq(std::string_view body,
                                                            const MessageAttributes& attributes) {
  if (auto error = dlq_.take()) return std::unexpected(*error);
  return ForwardingQueue::send_to_dlq(body, attributes);
}

}  // namespace ic::testing
