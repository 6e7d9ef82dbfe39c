// An in-memory QueuePort with SQS's delivery semantics (visibility timeout, receive count,
// a fresh receipt handle per delivery, per-entry batch answers) that records every call, for
// tests of anything that drives the port; FaultInjectingQueue in front of it adds failures.
// Time is scaled: one queue "second" lasts Options::second of real time, so a 20 s long poll
// or a 30 s visibility stays fast.
#pragma once

#include <chrono>
#include <cstddef>
#include <deque>
#include <map>
#include <string>
#include <vector>

#include "consumer/queue_port.hpp"
#include "core/thread_annotations.hpp"

namespace ic::testing {

struct DeadLettered {
  std::string body;
  consumer::MessageAttributes attributes;
};

// Thread-safety: every method may be called concurrently, the port's from tasks on any loop,
// the producer side and inspection from any thread. Ownership: copies everything.
class FakeQueue final : public consumer::QueuePort {
 public:
  struct Options {
    Millis second{20};                            // real duration of one queue second
    std::chrono::seconds visibility_timeout{60};  // the queue's default
  };

  FakeQueue() : FakeQueue(Options{}) {}
  explicit FakeQueue(Options options) : options_(options) {}

  // QueuePort
  // A long poll: with nothing visible it looks again every few milliseconds of real time,
  // sleeping on the awaiting task's loop, until `wait` (in queue time) ends or `stop` is
  // requested; with messages, or `wait` 0, it finishes when first awaited.
  [[nodiscard]] Task<Received> receive(int max_messages, std::chrono::seconds wait,
                                       std::stop_token stop = {}) override;
  [[nodiscard]] Task<BatchReply> delete_batch(
      std::span<const consumer::DeleteEntry> entries) override;
  [[nodiscard]] Task<BatchReply> change_visibility_batch(
      std::span<const consumer::VisibilityEntry> entries) override;
  [[nodiscard]] Task<std::expected<void, Error>> send_to_dlq(
      std::string_view body, const consumer::MessageAttributes& attributes) override;

  // Producer side: enqueues a visible message and returns its message id.
  std::string send(std::string body, consumer::MessageAttributes attributes = {});

  // The next receive that returns a message also returns its first message a second time,
  // with another receipt handle, as a standard queue occasionally does.
  void duplicate_next_delivery();

  // Inspection.
  [[nodiscard]] std::size_t remaining() const;  // not deleted, visible or not
  [[nodiscard]] std::size_t visible() const;
  [[nodiscard]] bool deleted(std::string_view message_id) const;
  [[nodiscard]] std::vector<DeadLettered> dead_lettered() const;
  [[nodiscard]] std::vector<int> receive_requests() const;  // max_messages of each call
  [[nodiscard]] std::vector<std::vector<consumer::DeleteEntry>> delete_calls() const;
  [[nodiscard]] std::vector<std::vector<consumer::VisibilityEntry>> visibility_calls() const;
  // Every visibility change of every call, in order.
  [[nodiscard]] std::vector<consumer::VisibilityEntry> visibility_entries() const;

 private:
  using SteadyClock = std::chrono::steady_clock;
  struct Stored {
    std::string body;
    consumer::MessageAttributes attributes;
    Instant sent_at;
    int receive_count = 0;
    SteadyClock::time_point visible_at;
    bool deleted = false;
  };
  [[nodiscard]] SteadyClock::duration scaled(std::chrono::seconds seconds) const;
  [[nodiscard]] consumer::Message deliver(const std::string& id, Stored& stored,
                                          SteadyClock::time_point now) REQUIRES(mutex_);
  // Up to `max_messages` visible messages, delivered now (plus a duplicate when one is due).
  [[nodiscard]] std::vector<consumer::Message> deliver_visible(int max_messages);
  [[nodiscard]] Stored* by_handle(std::string_view receipt_handle) REQUIRES(mutex_);

  const Options options_;
  mutable Mutex mutex_;
  std::deque<std::string> order_ GUARDED_BY(mutex_);  // message ids in send order
  std::map<std::string, Stored, std::less<>> messages_ GUARDED_BY(mutex_);
  // receipt handle -> message id
  std::map<std::string, std::string, std::less<>> handles_ GUARDED_BY(mutex_);
  std::size_t next_id_ GUARDED_BY(mutex_) = 0;
  std::size_t next_handle_ GUARDED_BY(mutex_) = 0;
  bool duplicate_next_ GUARDED_BY(mutex_) = false;
  std::vector<DeadLettered> dead_lettered_ GUARDED_BY(mutex_);
  std::vector<int> receive_requests_ GUARDED_BY(mutex_);
  std::vector<std::vector<consumer::DeleteEntry>> delete_calls_ GUARDED_BY(mutex_);
  std::vector<std::vector<consumer::VisibilityEntry>> visibility_calls_ GUARDED_BY(mutex_);
};

}  // namespace ic::testing
