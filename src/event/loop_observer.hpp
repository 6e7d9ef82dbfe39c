// What an event loop reports about its own health (docs/design.md §4, "Stalls"): turns that
// held it too long and how late its heartbeat timer fired. The binary turns these into metrics
// and logs (app/telemetry/loop_telemetry.hpp); the event folder knows neither.
#pragma once

#include <chrono>
#include <string_view>

namespace ic::event {

// Thread-safety: called on the observed loop's thread only, from inside a turn; must be quick
// and must not wait. Ownership: borrowed by the loop (EventLoop::observe) and by
// LoopHeartbeat; it outlives both. `what` lives only for the call.
class LoopObserver {
 public:
  virtual ~LoopObserver() = default;
  // One turn (a posted item, a timer callback, a resumed coroutine, a descriptor's handler)
  // held the loop for `took`, longer than the threshold given to EventLoop::observe. `what`
  // names it, e.g. "timer ic::consumer::AckBatcher::...::{lambda()#1}".
  virtual void on_stall(std::string_view what, std::chrono::nanoseconds took) = 0;
  // The loop's heartbeat timer ran `lag` after it was due: what every timer waits on top.
  virtual void on_lag(std::chrono::nanoseconds lag) = 0;
};

}  // namespace ic::event
