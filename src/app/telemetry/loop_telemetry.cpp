#include "app/telemetry/loop_telemetry.hpp"

#include <vector>

namespace ic::app {
namespace {

// 0.1 ms … 10 s: a healthy loop's timers fire within a millisecond (epoll's timeout is in
// whole ms); beyond kStallThreshold every charge on the loop waited as long.
const std::vector<double> kLagBuckets{0.0001, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
                                      0.05,   0.1,    0.25,  0.5,    1,     2.5,  10};

double seconds(std::chrono::nanoseconds d) {
  return std::chrono::duration<double>(d).count();
}

}  // namespace

LoopTelemetry::LoopTelemetry(observability::Logger& log, observability::MetricsRegistry& metrics,
                             const Clock& clock)
    : log_(log),
      stalls_(metrics
                  .counter("ic_event_loop_stalls_total",
                           "Event loop turns that held the loop longer than 100 ms")
                  .with({})),
      lag_(metrics
               .histogram("ic_event_loop_lag_seconds",
                          "How late the event loop's heartbeat timer fired", kLagBuckets)
               .with({})),
      limiter_(observability::kRepeatWindow, clock) {}

void LoopTelemetry::on_stall(std::string_view what, std::chrono::nanoseconds took) {
  stalls_.inc();
  if (const auto held = limiter_.admit("stall")) {
    log_.warn("event loop stalled", {{"ran", what},
                                     {"tookMs", std::chrono::duration_cast<Millis>(took).count()},
                                     {"suppressed", *held}});
  }
}

void LoopTelemetry::on_lag(std::chrono::nanoseconds lag) {
  lag_.observe(seconds(lag));
}

}  // namespace ic::app
