#include "app/liveness.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <utility>

namespace ic::app {

Liveness::Liveness(const event::LoopHeartbeat& heartbeat, const MonotonicClock& clock,
                   Millis stall_after, ThreadFailureObserver* observer)
    : heartbeat_(heartbeat), clock_(clock), stall_after_(stall_after), observer_(observer) {}

Liveness::~Liveness() {
  {
    const MutexLock lock(mutex_);
    destroyed_ = true;
  }
  disarmed_.notify_all();
  if (watchdog_.joinable()) watchdog_.join();
}

observability::ReadinessResult Liveness::check() const {
  {
    const MutexLock lock(mutex_);
    if (!failure_.empty()) return {.ok = false, .detail = failure_, .code = "Stopping"};
  }
  const auto silent = std::chrono::duration_cast<Millis>(clock_.now() - heartbeat_.last_beat());
  if (silent <= stall_after_) return {.ok = true};
  return {.ok = false,
          .detail = fmt::format("the event loop has not turned for {} ms", silent.count()),
          .code = "LoopStalled"};
}

void Liveness::failing(std::string reason, Millis bound, std::function<void()> exit) {
  const MutexLock lock(mutex_);
  if (!failure_.empty() || destroyed_) return;
  failure_ = reason.empty() ? "failing" : std::move(reason);
  watchdog_ = std::thread([this, bound, exit = std::move(exit)] {
    bool overran = false;
    {
      MutexLock held(mutex_);
      overran =
          !disarmed_.wait_for(mutex_, bound, [this]() REQUIRES(mutex_) { return destroyed_; });
    }
    if (overran) run_guarded("watchdog", observer_, exit);
  });
}

void exit_overran(observability::Logger& log, Millis bound, Millis log_flush) {
  log.error("stop after a receiver failure overran; exiting", {{"boundMs", bound.count()}});
  (void)log.flush(log_flush);
  std::quick_exit(1);
}

}  // namespace ic::app
