#include "app/telemetry/telemetry.hpp"

#include "app/build_info.hpp"
#include "observability/process_metrics.hpp"

namespace ic::app {
namespace {

thread_local std::string_view current_message_id;

}  // namespace

MessageScope::MessageScope(std::string_view message_id) {
  current_message_id = message_id;
}
MessageScope::~MessageScope() {
  current_message_id = {};
}
std::string_view MessageScope::current() {
  return current_message_id;
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
