// A timer the loop runs every `interval`, for two readers. How late it fires is the loop's lag
// (LoopObserver::on_lag): what every other timer waits on top of its own time. When it last
// fired is what a liveness check reads from another thread: an idle loop asleep in epoll still
// fires it, so a beat overdue by seconds means a turn is stuck (docs/design.md §4, "Stalls").
//
//   event::LoopHeartbeat heartbeat(loop, 250ms, &observer);
//   heartbeat.start();
//   // admin thread:
//   bool stuck = clock.now() - heartbeat.last_beat() > 15s;
#pragma once

#include <atomic>
#include <optional>

#include "core/time.hpp"
#include "event/event_loop.hpp"
#include "event/loop_observer.hpp"

namespace ic::event {

// Thread-safety: last_beat() from any thread; the rest on the loop's thread (or before the
// loop runs). Ownership: borrows the loop and the observer (may be null), which outlive it.
class LoopHeartbeat {
 public:
  LoopHeartbeat(EventLoop& loop, Millis interval, LoopObserver* observer = nullptr);
  ~LoopHeartbeat();  // cancels the timer
  LoopHeartbeat(const LoopHeartbeat&) = delete;
  LoopHeartbeat& operator=(const LoopHeartbeat&) = delete;

  // Arms the first beat one interval from now; the beat counts as fresh from here.
  void start();
  // When the timer last ran (start() before it first did; construction before start()).
  [[nodiscard]] SteadyInstant last_beat() const noexcept {
    return SteadyInstant{SteadyInstant::duration{last_beat_.load(std::memory_order_acquire)}};
  }

 private:
  void arm(SteadyInstant due);
  void beat(SteadyInstant due);

  EventLoop& loop_;
  const Millis interval_;
  LoopObserver* const observer_;
  std::optional<EventLoop::TimerId> timer_;
  std::atomic<SteadyInstant::rep> last_beat_;
};

}  // namespace ic::event
