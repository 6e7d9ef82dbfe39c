// A QueuePort decorator that injects failures in front of any other port (the in-memory fake,
// or SqsQueue against an emulator), in the manner of leveldb's fault-injection Env: each fault
// is armed with a count and consumed one call, or one batch entry, at a time.
//
//   FakeQueue fake;
//   FaultInjectingQueue queue(fake);
//   queue.fail_delete_entries(1, {.error_class = ErrorClass::Retryable, .code = "InternalError"});
#pragma once

#include <optional>

#include "consumer/queue_port.hpp"
#include "core/thread_annotations.hpp"

namespace ic::consumer::testing {

// Thread-safety: every method may be called concurrently. Ownership: borrows `inner`, which
// must outlive the decorator.
class FaultInjectingQueue final : public QueuePort {
 public:
  explicit FaultInjectingQueue(QueuePort& inner) : inner_(inner) {}

  // Whole calls fail without reaching the inner port.
  void fail_receives(int calls, QueueError error);
  void fail_delete_calls(int calls, QueueError error);
  void fail_dlq_sends(int calls, QueueError error);
  // Single entries fail (the next `entries` entries, in batch order); they never reach the
  // inner port, the other entries of the batch do.
  void fail_delete_entries(int entries, QueueError error);
  void fail_visibility_entries(int entries, QueueError error);

  [[nodiscard]] std::expected<std::vector<Message>, QueueError> receive(
      int max_messages, std::chrono::seconds wait) override;
  [[nodiscard]] std::expected<BatchResult, QueueError> delete_batch(
      std::span<const DeleteEntry> entries) override;
  [[nodiscard]] std::expected<BatchResult, QueueError> change_visibility_batch(
      std::span<const VisibilityEntry> entries) override;
  [[nodiscard]] std::expected<void, QueueError> send_to_dlq(
      std::string_view body, const MessageAttributes& attributes) override;

 private:
  // One armed failure, with its own lock: arming and taking are each atomic.
  class Fault {
   public:
    void arm(int count, QueueError error);
    // Consumes one occurrence; the error while it lasts.
    [[nodiscard]] std::optional<QueueError> take();

   private:
    Mutex mutex_;
    int remaining_ GUARDED_BY(mutex_) = 0;
    QueueError error_ GUARDED_BY(mutex_);
  };

  // Sends the entries without an injected fault to `call`, and merges the answers by position.
  template <class Entry, class Call>
  [[nodiscard]] std::expected<BatchResult, QueueError> with_entry_faults(
      std::span<const Entry> entries, Fault& fault, Call call);

  QueuePort& inner_;
  Fault receive_, delete_call_, dlq_, delete_entry_, visibility_entry_;
};

}  // namespace ic::consumer::testing
