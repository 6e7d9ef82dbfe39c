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
      circuits(log, metrics) {
  metrics
      .gauge("ic_build_info", "Always 1; the labels name the running build", {"version", "commit"})
      .with({kVersion, kCommit})
      .set(1);
  metrics.add_collector(observability::process_metrics_text);
}

}  // namespace ic::app
