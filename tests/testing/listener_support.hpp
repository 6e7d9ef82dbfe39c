// Helpers shared by the listener container's tests (over FakeQueue, and over SQS on moto): a
// recording observer, polling with a deadline, a gate handlers wait at on the container's loop
// until the test lets them through, and a container running on its own thread for the length
// of a test.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "consumer/listener_container.hpp"
#include "consumer/listener_observer.hpp"
#include "core/thread_annotations.hpp"
#include "event/wait_queue.hpp"

namespace ic::testing {

// Polls `condition` until it holds or `timeout` passes; returns its last value.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds{10}) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
  }
  return true;
}

// The same from inside a task on `loop`: polls without blocking the loop, so the other tasks
// (a heartbeat, say) go on meanwhile.
inline Task<bool> eventually_on(event::EventLoop& loop, std::function<bool()> condition,
                                std::chrono::milliseconds timeout = std::chrono::seconds{10}) {
  const auto deadline = loop.now() + timeout;
  while (!condition()) {
    if (loop.now() >= deadline) co_return false;
    co_await event::sleep_for(loop, std::chrono::milliseconds{2});
  }
  co_return true;
}

// Handlers wait at the gate on the container's loop (never blocking it) until the test, on its
// own thread, lets some through: release(n) is the semaphore's, posted to the loop.
class LoopGate {
 public:
  explicit LoopGate(event::EventLoop& loop) : loop_(loop), opened_(loop) {}
  // On the loop: waits for a permit and takes it.
  Task<void> pass() {
    while (permits_ == 0) co_await opened_.wait();
    --permits_;
  }
  // Any thread.
  void release(int permits = 1) {
    loop_.post([this, permits] {
      permits_ += permits;
      opened_.notify_all();
    });
  }

 private:
  event::EventLoop& loop_;
  event::WaitQueue opened_;
  int permits_ = 0;
};

// A handler that counts each start, then holds the message until `gate` lets it ack.
inline consumer::Handler ack_when_released(std::atomic<int>& started, LoopGate& gate) {
  return [&started, &gate](const consumer::Message&,
                           consumer::LeaseHeartbeat&) -> Task<consumer::Disposition> {
    ++started;
    co_await gate.pass();
    co_return consumer::Ack{};
  };
}

// A handler answering `disposition` at once.
inline consumer::Handler always(consumer::Disposition disposition) {
  return [disposition](const consumer::Message&,
                       consumer::LeaseHeartbeat&) -> Task<consumer::Disposition> {
    co_return disposition;
  };
}

struct EntryFailure {
  consumer::BatchAction action;
  std::string message_id;
  Error error;
  bool final;
};

class RecordingObserver final : public consumer::ListenerObserver {
 public:
  void on_received(std::size_t count) override {
    MutexLock lock(mutex_);
    received_ += count;
  }
  void on_receive_error(const Error& error, Millis delay) override {
    MutexLock lock(mutex_);
    receive_errors_.emplace_back(error, delay);
  }
  void on_disposition(consumer::DispositionKind kind, std::string_view reason, Millis) override {
    MutexLock lock(mutex_);
    dispositions_.emplace_back(kind, std::string(reason));
  }
  void on_handler_error(std::string_view message_id, std::string_view) override {
    MutexLock lock(mutex_);
    handler_errors_.emplace_back(message_id);
  }
  void on_dlq_send_failed(std::string_view message_id, const Error&) override {
    MutexLock lock(mutex_);
    dlq_failures_.emplace_back(message_id);
  }
  void on_dlq_copy_refused(std::string_view, std::string_view next, const Error&) override {
    MutexLock lock(mutex_);
    dlq_copies_refused_.emplace_back(next);
  }
  void on_quarantined(const consumer::Message& message,
                      const consumer::QuarantineRecord& record) override {
    MutexLock lock(mutex_);
    quarantined_.emplace_back(message.message_id, record.failure_reason);
  }
  void on_dlq_attributes_dropped(std::string_view, std::span<const std::string> names) override {
    MutexLock lock(mutex_);
    dlq_attributes_dropped_.insert(dlq_attributes_dropped_.end(), names.begin(), names.end());
  }
  void on_batch_entry_failed(consumer::BatchAction action, std::string_view message_id,
                             const Error& error, bool final) override {
    MutexLock lock(mutex_);
    entry_failures_.push_back({action, std::string(message_id), error, final});
  }
  void on_heartbeat(std::string_view, consumer::ClaimExtension extension) override {
    MutexLock lock(mutex_);
    heartbeats_.push_back(extension);
  }
  void on_in_flight(std::size_t count) override {
    MutexLock lock(mutex_);
    max_in_flight_ = std::max(max_in_flight_, count);
  }
  void on_returned_unstarted(std::size_t count) override {
    MutexLock lock(mutex_);
    returned_unstarted_ += count;
  }
  void on_grace_exceeded(std::size_t still_running) override {
    MutexLock lock(mutex_);
    grace_exceeded_.push_back(still_running);
  }
  void on_thread_exception(std::string_view thread, std::string_view) noexcept override {
    MutexLock lock(mutex_);
    thread_exceptions_.emplace_back(thread);
  }

  std::size_t received() const {
    MutexLock lock(mutex_);
    return received_;
  }
  std::vector<std::pair<Error, Millis>> receive_errors() const {
    MutexLock lock(mutex_);
    return receive_errors_;
  }
  std::vector<std::pair<consumer::DispositionKind, std::string>> dispositions() const {
    MutexLock lock(mutex_);
    return dispositions_;
  }
  std::vector<std::string> handler_errors() const {
    MutexLock lock(mutex_);
    return handler_errors_;
  }
  std::vector<std::string> dlq_failures() const {
    MutexLock lock(mutex_);
    return dlq_failures_;
  }
  // The smaller copy announced after each refusal ("ours_only", "reason_only", "body_only").
  std::vector<std::string> dlq_copies_refused() const {
    MutexLock lock(mutex_);
    return dlq_copies_refused_;
  }
  // (message id, reason) of each quarantine.
  std::vector<std::pair<std::string, std::string>> quarantined() const {
    MutexLock lock(mutex_);
    return quarantined_;
  }
  std::vector<std::string> dlq_attributes_dropped() const {
    MutexLock lock(mutex_);
    return dlq_attributes_dropped_;
  }
  std::vector<EntryFailure> entry_failures() const {
    MutexLock lock(mutex_);
    return entry_failures_;
  }
  std::vector<consumer::ClaimExtension> heartbeats() const {
    MutexLock lock(mutex_);
    return heartbeats_;
  }
  std::size_t max_in_flight() const {
    MutexLock lock(mutex_);
    return max_in_flight_;
  }
  std::size_t returned_unstarted() const {
    MutexLock lock(mutex_);
    return returned_unstarted_;
  }
  std::vector<std::size_t> grace_exceeded() const {
    MutexLock lock(mutex_);
    return grace_exceeded_;
  }
  std::vector<std::string> thread_exceptions() const {
    MutexLock lock(mutex_);
    return thread_exceptions_;
  }

 private:
  mutable Mutex mutex_;
  std::size_t received_ GUARDED_BY(mutex_) = 0;
  std::vector<std::pair<Error, Millis>> receive_errors_ GUARDED_BY(mutex_);
  std::vector<std::pair<consumer::DispositionKind, std::string>> dispositions_ GUARDED_BY(mutex_);
  std::vector<std::string> handler_errors_ GUARDED_BY(mutex_);
  std::vector<std::string> dlq_failures_ GUARDED_BY(mutex_);
  std::vector<std::string> dlq_copies_refused_ GUARDED_BY(mutex_);
  std::vector<std::pair<std::string, std::string>> quarantined_ GUARDED_BY(mutex_);
  std::vector<std::string> dlq_attributes_dropped_ GUARDED_BY(mutex_);
  std::vector<EntryFailure> entry_failures_ GUARDED_BY(mutex_);
  std::vector<consumer::ClaimExtension> heartbeats_ GUARDED_BY(mutex_);
  std::size_t max_in_flight_ GUARDED_BY(mutex_) = 0;
  std::size_t returned_unstarted_ GUARDED_BY(mutex_) = 0;
  std::vector<std::size_t> grace_exceeded_ GUARDED_BY(mutex_);
  std::vector<std::string> thread_exceptions_ GUARDED_BY(mutex_);
};

// Runs container.run() on a thread; stop() (or the destructor) requests a stop and joins.
class Running {
 public:
  explicit Running(consumer::ListenerContainer& container)
      : container_(container), thread_([this] { container_.run(); }) {}
  ~Running() { stop(); }
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;
  void stop() {
    container_.request_stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  consumer::ListenerContainer& container_;
  std::thread thread_;
};

}  // namespace ic::testing
