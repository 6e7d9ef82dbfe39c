#include "app/telemetry/health_telemetry.hpp"

namespace ic::app {

HealthTelemetry::HealthTelemetry(observability::Logger& log, observability::MetricsRegistry& m)
    : log_(log),
      ready_(m.gauge("ic_ready", "1 while /health/ready answers 200")),
      dependency_up_(
          m.gauge("ic_dependency_up", "1 while the dependency counts as up", {"dependency"})),
      queue_messages_(m.gauge("ic_queue_messages", "Approximate messages by queue and state",
                              {"queue", "state"})) {}

void HealthTelemetry::on_readiness(std::span<const observability::DependencyStatus> dependencies,
                                   bool ready) {
  ready_.with({}).set(ready ? 1 : 0);
  // The first report (the initial state) only sets the gauges; later ones log what changed:
  // a dependency that came up, or went down, or is down for a new reason.
  const bool initial = !reported_ready_.has_value();
  for (const auto& dependency : dependencies) {
    dependency_up_.with({dependency.name}).set(dependency.up ? 1 : 0);
    const std::string verdict = dependency.up ? "" : dependency.code;
    const auto [reported, inserted] = reported_.try_emplace(dependency.name, verdict);
    if (initial || inserted || reported->second == verdict) continue;
    reported->second = verdict;
    if (dependency.up) {
      log_.info("dependency up", {{"dependency", dependency.name}});
    } else {
      log_.warn("dependency down", {{"dependency", dependency.name},
                                    {"code", dependency.code},
                                    {"detail", dependency.detail}});
    }
  }
  if (!initial && *reported_ready_ != ready) {
    if (ready) {
      log_.info("ready", {});
    } else {
      log_.warn("not ready", {});
    }
  }
  reported_ready_ = ready;
}

void HealthTelemetry::queue_depth(std::string_view queue, const sqs::QueueDepth& depth) {
  for (const auto& [state, value] :
       {std::pair{"visible", depth.visible}, std::pair{"in_flight", depth.in_flight},
        std::pair{"delayed", depth.delayed}}) {
    if (value) queue_messages_.with({queue, state}).set(static_cast<double>(*value));
  }
}

void HealthTelemetry::queue_setting_warning(std::string_view problem, std::chrono::seconds lease,
                                            const sqs::QueueSettings& settings) {
  const auto number_or_none = [](std::string_view key, std::optional<std::int64_t> value) {
    return value ? observability::LogField(key, *value) : observability::LogField(key, "none");
  };
  const auto visibility = settings.visibility_timeout;
  log_.warn(problem, {{"leaseSeconds", lease.count()},
                      number_or_none("visibilityTimeoutSeconds",
                                     visibility ? std::optional<std::int64_t>(visibility->count())
                                                : std::nullopt),
                      {"redrivePolicy", settings.has_redrive_policy},
                      number_or_none("maxReceiveCount", settings.max_receive_count)});
}

}  // namespace ic::app
