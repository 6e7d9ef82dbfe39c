// A QueuePort decorator that injects failures in front of any other port (the in-memory fake,
// or SqsQueue against an emulator), in the manner of leveldb's fault-injection Env: each fault
// is armed with a count and consumed one call, or one batch entry, at a time. A call or entry
// without an armed fault reaches the inner port unchanged, through consumer::ForwardingQueue.
//
//   FakeQueue fake;
//   FaultInjectingQueue queue(fake);
//   queue.fail_delete_entries(1, {.error_class = ErrorClass::Retryable, .code = "InternalError"});
#pragma once

#include <optional>

#include "consumer/forwarding_queue.hpp"
#include "core/thread_annotations.hpp"

namespace ic::testing {

// Thread-safety: every method may be called concurrently; its tasks suspend only where the
// inner port's do. Ownership: borrows `inner`, which must outlive the decorator.
class FaultInjectingQueue final : public consumer::ForwardingQueue {
 public:
  explicit FaultInjectingQueue(consumer::QueuePort& inner) : ForwardingQueue(inner) {}

  // Whole calls fail without reaching the inner port.
  void fail_receives(int calls, Error error);
  void fail_delete_calls(int calls, Error error);
  void fail_dlq_sends(int calls, Error error);
  // Single entries fail (the next `entries` entries, in batch order); they never reach the
  // inner port, the other entries of the batch do.
  void fail_delete_entries(int entries, Error error);
  void fail_visibility_entries(int entries, Error error);

  [[nodiscard]] Task<Received> receive(int max_messages, std::chrono::seconds wait,
                                       std::stop_token stop = {}) override;
  [[nodiscard]] Task<BatchReply> delete_batch(
      std::span<const consumer::DeleteEntry> entries) override;
  [[nodiscard]] Task<BatchReply> change_visibility_batch(
      std::span<const consumer::VisibilityEntry> entries) override;
  [[nodiscard]] Task<std::expected<void, Error>> send_to_dlq(
      std::string_view body, const consumer::MessageAttributes& attributes) override;

 private:
  // One armed failure, with its own lock: arming and taking are each atomic.
  class Fault {
   public:
    void arm(int count, Error error);
    // Consumes one occurrence; the error while it lasts.
    [[nodiscard]] std::optional<Error> take();

   private:
    Mutex mutex_;
    int remaining_ GUARDED_BY(mutex_) = 0;
    Error error_ GUARDED_BY(mutex_);
  };

  // Sends the entries without an injected fault to `call`, and merges the answers by position.
  template <class Entry, class Call>
  [[nodiscard]] Task<BatchReply> with_entry_faults(std::span<const Entry> entries, Fault& fault,
                                                   Call call);

  Fault receive_, delete_call_, dlq_, delete_entry_, visibility_entry_;
};

}  // namespace ic::testing
