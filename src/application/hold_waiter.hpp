// Interruptible waiting on the service's clock: a task holding a probe's message waits for the
// next probe time, a debit waits for a token, a copy waits for its local holder, and all of them
// must give up at once when the process is asked to stop (the container's shutdown grace is
// short). A debit waiting for a concurrency slot waits in a line of the pacer's own (wait_in),
// woken only with a slot.
#pragma once

#include "core/task.hpp"
#include "core/time.hpp"
#include "event/wait_queue.hpp"

namespace ic::application {

// Thread-safety: the loop's thread only (tasks of the consumer's loop); a stop asked from
// another thread is posted to the loop first.
class HoldWaiter {
 public:
  virtual ~HoldWaiter() = default;
  // Finishes once the clock reads `at` or later (true), or once stop is requested (false);
  // notify_all() may end it early (true), callers re-check what they wait for.
  [[nodiscard]] virtual Task<bool> wait_until(Instant at) = 0;
  virtual void notify_all() = 0;
  virtual void request_stop() = 0;
  [[nodiscard]] virtual bool stop_requested() const = 0;
  // The loop a caller's own line (a WaitQueue) lives on.
  [[nodiscard]] virtual event::EventLoop& loop() = 0;
  // Waits in `line`, first come first served, until its owner notifies this waiter (true) or a
  // stop (false); notify_all() above does not end it.
  [[nodiscard]] virtual Task<bool> wait_in(event::WaitQueue& line) = 0;
};

// The real one: a WaitQueue of the loop, re-reading the clock at least every 100 ms so that a
// stepped wall clock cannot stretch a wait. Ownership: the loop and the clock are borrowed.
class LoopWaiter final : public HoldWaiter {
 public:
  LoopWaiter(event::EventLoop& loop, const Clock& clock)
      : loop_(loop), clock_(clock), changed_(loop) {}
  Task<bool> wait_until(Instant at) override;
  void notify_all() override;
  void request_stop() override;
  bool stop_requested() const override { return stop_.stop_requested(); }
  event::EventLoop& loop() override { return loop_; }
  Task<bool> wait_in(event::WaitQueue& line) override;

 private:
  event::EventLoop& loop_;
  const Clock& clock_;
  event::WaitQueue changed_;
  std::stop_source stop_;
  unsigned long wakeups_ = 0;
};

}  // namespace ic::application
