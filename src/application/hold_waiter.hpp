// Interruptible waiting on the service's clock: a worker holding a probe's message waits for the
// next probe time, and a debit waits for a concurrency slot or a token, and all of them must
// give up at once when the process is asked to stop (the container's shutdown grace is short).
#pragma once

#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic::application {

// Thread-safety: every member may be called from any thread.
class HoldWaiter {
 public:
  virtual ~HoldWaiter() = default;
  // Returns once the clock reads `at` or later (true), or once stop is requested (false);
  // notify_all() may end it early (true), callers re-check what they wait for.
  [[nodiscard]] virtual bool wait_until(Instant at) = 0;
  virtual void notify_all() = 0;
  virtual void request_stop() = 0;
  [[nodiscard]] virtual bool stop_requested() const = 0;
};

// The real one: a condition variable, re-reading the clock at least every 100 ms so that a
// stepped wall clock cannot stretch a wait. Ownership: the clock is borrowed.
class ClockWaiter final : public HoldWaiter {
 public:
  explicit ClockWaiter(const Clock& clock) : clock_(clock) {}
  bool wait_until(Instant at) override;
  void notify_all() override;
  void request_stop() override;
  bool stop_requested() const override;

 private:
  const Clock& clock_;
  mutable Mutex mutex_;
  CondVar changed_;
  bool stop_ GUARDED_BY(mutex_) = false;
  unsigned long wakeups_ GUARDED_BY(mutex_) = 0;
};

}  // namespace ic::application
