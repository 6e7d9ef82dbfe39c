// SIGTERM and SIGINT for `run`: blocked in every thread and taken by one waiter thread, which
// runs the stop callback (a signal handler could do nothing of the sort safely).
//
//   ShutdownSignals signals;  // first: every thread started after it inherits the mask
//   Logger log(...); EventLoop loop; ListenerContainer container(...);
//   const std::jthread waiter = signals.on_signal(
//       [&](int) { container.request_stop(); log.info("stopping"); }, observer);
//   container.run();
//   // `waiter` goes first, joined before anything its callback uses is destroyed
#pragma once

#include <signal.h>

#include <functional>
#include <initializer_list>
#include <thread>

#include "core/thread_guard.hpp"

namespace ic::app {

class ShutdownSignals {
 public:
  // Blocks `signals` in the calling thread, and so in every thread it starts afterwards. They
  // stay blocked after destruction: one arriving late stays pending rather than killing a
  // process that is shutting down already.
  explicit ShutdownSignals(std::initializer_list<int> signals = {SIGTERM, SIGINT});

  // A thread that runs `stop(signal)` at the first of the signals, then ends. Its destruction
  // asks it to stop waiting and joins it (a callback in progress included: up to one 100 ms
  // poll more), so declare it after everything `stop` uses. What the callback throws goes to
  // `observer` as thread "signals". Ownership: the thread holds copies of the signal set and of
  // `stop`, nothing of this object; `observer` must outlive the thread.
  [[nodiscard]] std::jthread on_signal(std::function<void(int)> stop,
                                       ThreadFailureObserver& observer) const;

 private:
  sigset_t set_{};
};

}  // namespace ic::app
