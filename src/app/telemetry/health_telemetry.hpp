// What readiness and the health probes report (observability::ReadinessListener, queue depths,
// queue settings that undermine the claim protocol), as gauges and log lines.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "adapters/sqs/queue_health.hpp"
#include "observability/json_log.hpp"
#include "observability/metrics.hpp"
#include "observability/readiness.hpp"

namespace ic::app {

// Thread-safety: on_readiness calls are serialised by the Readiness's lock; queue_depth and
// queue_setting_warning come from the prober's thread. Ownership: borrows logger and registry.
class HealthTelemetry final : public observability::ReadinessListener {
 public:
  HealthTelemetry(observability::Logger& log, observability::MetricsRegistry& metrics);

  void on_readiness(std::span<const observability::DependencyStatus> dependencies,
                    bool ready) override;

  // What the prober read: `queue` is the label value, "source" or "dlq".
  void queue_depth(std::string_view queue, const sqs::QueueDepth& depth);
  // A source-queue setting that undermines the claim protocol; logged once at start-up.
  void queue_setting_warning(std::string_view problem, std::chrono::seconds lease,
                             const sqs::QueueSettings& settings);

 private:
  observability::Logger& log_;
  observability::GaugeFamily& ready_;
  observability::GaugeFamily& dependency_up_;
  observability::GaugeFamily& queue_messages_;
  // The last verdict logged per dependency (empty: up, else the code it is down with).
  // on_readiness calls are serialised by the Readiness's lock, so these need no lock of their own.
  std::map<std::string, std::string, std::less<>> reported_;
  std::optional<bool> reported_ready_;
};

}  // namespace ic::app
