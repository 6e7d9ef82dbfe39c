// What the event loop reports about itself (event::LoopObserver): the lag of its heartbeat
// timer as the histogram ic_event_loop_lag_seconds, and every stalled turn counted in
// ic_event_loop_stalls_total and logged (rate-limited) with what ran (docs/design.md §4).
#pragma once

#include "event/loop_observer.hpp"
#include "observability/json_log.hpp"
#include "observability/metrics.hpp"
#include "observability/repeat_limiter.hpp"

namespace ic::app {

// Thread-safety: the hooks run on the observed loop's thread; the logger and the series are
// thread-safe. Ownership: borrows the logger, the registry and the clock.
class LoopTelemetry final : public event::LoopObserver {
 public:
  // `clock` paces the stall warning: the first goes out, then one per kRepeatWindow.
  LoopTelemetry(observability::Logger& log, observability::MetricsRegistry& metrics,
                const Clock& clock = real_clock());

  void on_stall(std::string_view what, std::chrono::nanoseconds took) override;
  void on_lag(std::chrono::nanoseconds lag) override;

 private:
  observability::Logger& log_;
  observability::Counter& stalls_;
  observability::Histogram& lag_;
  observability::RepeatLimiter limiter_;
};

}  // namespace ic::app
