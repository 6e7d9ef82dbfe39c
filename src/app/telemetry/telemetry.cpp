#include "app/telemetry/telemetry.hpp"

#include "app/build_info.hpp"
#include "core/task_locals.hpp"
#include "observability/process_metrics.hpp"

namespace ic::app {
MessageScope::MessageScope(std::string_view message_id) {
  task_locals().message_id = message_id;
}
MessageScope::~MessageScope() {
  task_locals().message_id.clear();
}
std::string_view MessageScope::current() {
  return task_locals().message_id;
}

Telemetry::Telemetry(observability::Logger& log, observability::MetricsRegistry& metrics)
    : charges(log, metrics),
      listener(log, metrics),
      aws(log, metrics),
      health(log, metrics),
      circuits(log, metrics),
      loop(log, metrics),
      credentials(log, metrics),
      log_(log) {
  log.count_drops(&metrics
                       .counter("ic_log_lines_dropped_total",
                                "Log lines dropped because the log sink did not take them")
                       .with({}));
  metrics
      .gauge("ic_build_info", "Always 1; the labels name the running build", {"version", "commit"})
      .with({kVersion, kCommit})
      .set(1);
  metrics.add_collector(observability::process_metrics_text);
}

Telemetry::~Telemetry() {
  log_.count_drops(nullptr);  // the registry may go before the logger
}

}  // namespace ic::app
