// `/health/live` of `run` (docs/design.md §5, "Admin endpoints"): live while the event loop
// turns and the process is not on its way out after a failure. An idle loop still fires its
// heartbeat every few hundred ms, so a beat overdue by LOOP_STALL_SECONDS means a turn is stuck,
// and the orchestrator should restart the process. A failure that ends the process (a dead
// receiver) is bounded here too: a stop that has not finished in time ends the process anyway.
//
//   Liveness live(heartbeat, loop_clock, settings.loop_stall);
//   admin.set_liveness_check([&] { return live.check(); });
//   live.failing("a receiver died", grace + 5s, [&] { exit_overran(log, grace + 5s, 1s); });
#pragma once

#include <functional>
#include <string>
#include <thread>

#include "core/thread_annotations.hpp"
#include "core/thread_guard.hpp"
#include "core/time.hpp"
#include "event/loop_heartbeat.hpp"
#include "observability/admin_server.hpp"
#include "observability/json_log.hpp"

namespace ic::app {

// Thread-safety: check() and failing() from any thread. Ownership: borrows the heartbeat, the
// clock (the loop's) and the observer, which outlive it. Destroying it disarms the exit: the
// stop finished in time.
class Liveness {
 public:
  Liveness(const event::LoopHeartbeat& heartbeat, const MonotonicClock& clock, Millis stall_after,
           ThreadFailureObserver* observer = nullptr);
  ~Liveness();
  Liveness(const Liveness&) = delete;
  Liveness& operator=(const Liveness&) = delete;

  // Not ok (503) with the reason while the loop is stuck or the process is failing.
  [[nodiscard]] observability::ReadinessResult check() const;
  // The process is ending because of `reason`: not live from now on, and unless this object is
  // destroyed within `bound`, `exit` runs on a watchdog thread. Only the first call counts.
  void failing(std::string reason, Millis bound, std::function<void()> exit);

 private:
  const event::LoopHeartbeat& heartbeat_;
  const MonotonicClock& clock_;
  const Millis stall_after_;
  ThreadFailureObserver* const observer_;
  mutable Mutex mutex_;
  CondVar disarmed_;
  bool destroyed_ GUARDED_BY(mutex_) = false;
  std::string failure_ GUARDED_BY(mutex_);
  std::thread watchdog_;  // started by failing(), joined by the destructor
};

// The `exit` of failing() for `run`: logs that the stop overran `bound`, gives the logger's
// writer at most `log_flush` to write that line (quick_exit runs no destructor, so it would be
// lost with whatever else is queued; bounded, so a log reader that stopped cannot hold the
// exit), and ends the process with status 1.
[[noreturn]] void exit_overran(observability::Logger& log, Millis bound, Millis log_flush);

}  // namespace ic::app
