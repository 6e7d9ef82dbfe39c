#include "app/health.hpp"

#include <algorithm>
#include <functional>
#include <utility>

#include "event/run_blocking.hpp"

namespace ic::app {
namespace {

using namespace std::chrono_literals;

// '_' is outside the chargeId alphabet (§5), so no charge can collide with the probe.
constexpr std::string_view kProbeKey = "__readiness_probe__";
// Below 3, a charge whose effect outlives a lease or two (answered DUPLICATE_IN_PROGRESS on
// each redelivery) is dead-lettered by SQS itself, without a failureReason (§2).
constexpr std::int64_t kMinMaxReceiveCount = 3;
// A round is three probes of one attempt each, bounded by the probe clients' 5 s timeout.
constexpr std::chrono::seconds kProbeRoundBound{15};
// After a failed round: soon enough to see a recovery quickly, rare enough to cost nothing.
constexpr std::chrono::seconds kRetryInterval{5};

observability::Probe queue_probe(std::string dependency, std::string_view label,
                                 sqs::SqsClient& sqs, std::string url, HealthTelemetry& telemetry,
                                 std::function<void(const sqs::QueueSettings&)> on_first_answer) {
  return {std::move(dependency),
          [&sqs, &telemetry, label, url = std::move(url),
           first = std::move(on_first_answer)]() mutable -> std::expected<void, Error> {
            auto health = event::run_blocking(sqs::read_queue_health(sqs, url));
            if (!health) return std::unexpected(health.error());
            telemetry.queue_depth(label, health->depth);
            if (first) std::exchange(first, nullptr)(health->settings);
            return {};
          }};
}

}  // namespace

std::vector<observability::DependencySpec> run_dependencies(std::chrono::seconds probe_interval) {
  const Millis silence = 2 * probe_interval + kProbeRoundBound;
  const auto probed = [&](std::string name) {
    return observability::DependencySpec{.name = std::move(name), .max_silence = silence};
  };
  // One failed receive or store call among many is noise; two in a row is an outage.
  return {probed("queue"),
          probed("dlq"),
          probed("table"),
          {.name = "receive", .failures_to_down = 2, .up_until_proven = true},
          {.name = "store",
           .failures_to_down = 2,
           .up_until_proven = true,
           .recovered_by = "table",
           .quiet_period = probe_interval}};
}

std::vector<std::string_view> check_queue_settings(std::chrono::seconds lease,
                                                   const sqs::QueueSettings& settings) {
  std::vector<std::string_view> problems;
  if (settings.visibility_timeout && lease > *settings.visibility_timeout) {
    problems.emplace_back(
        "LEASE_SECONDS exceeds the source queue's VisibilityTimeout: messages are redelivered "
        "while their claim is live");
  }
  if (!settings.has_redrive_policy) {
    problems.emplace_back(
        "the source queue has no RedrivePolicy: a message that never succeeds is retried until "
        "its retention ends");
  } else if (!settings.max_receive_count || *settings.max_receive_count < kMinMaxReceiveCount) {
    problems.emplace_back(
        "the source queue's maxReceiveCount is below 3: in-flight duplicates can be "
        "dead-lettered without a failureReason");
  }
  return problems;
}

std::vector<observability::Probe> run_probes(const ProbeTargets& t) {
  auto check_settings = [&telemetry = t.telemetry, lease = t.lease](const sqs::QueueSettings& s) {
    for (const std::string_view problem : check_queue_settings(lease, s)) {
      telemetry.queue_setting_warning(problem, lease, s);
    }
  };
  std::vector<observability::Probe> probes;
  probes.push_back(queue_probe("queue", "source", t.sqs, t.queue_url, t.telemetry, check_settings));
  probes.push_back(queue_probe("dlq", "dlq", t.sqs, t.dlq_url, t.telemetry, nullptr));
  probes.push_back({"table", [&store = t.store]() -> std::expected<void, Error> {
                      auto record = event::run_blocking(store.get(kProbeKey));
                      if (!record) return std::unexpected(record.error());
                      return {};
                    }});
  return probes;
}

RunHealth::RunHealth(const RunSettings& settings, AwsStack& aws, Telemetry& telemetry,
                     const Clock& clock)
    : readiness_(clock, run_dependencies(settings.probe_interval), &telemetry.health),
      probe_store_(aws.probe_dynamodb(), charge_table(settings.table, settings.retention)),
      prober_(readiness_,
              run_probes({.sqs = aws.probe_sqs(),
                          .queue_url = settings.queue_url,
                          .dlq_url = settings.dlq_url,
                          .store = probe_store_,
                          .lease = settings.lease,
                          .telemetry = telemetry.health}),
              {.interval = settings.probe_interval,
               .retry_interval = std::min<Millis>(settings.probe_interval, kRetryInterval)},
              &telemetry.listener) {
  telemetry.feed(readiness_);
  telemetry.health.on_readiness(readiness_.statuses(),
                                readiness_.ready());  // the gauges' first values
}

void add_circuit_checks(observability::AdminServer& admin,
                        const application::DependencyCircuits& circuits) {
  for (const application::Dependency dependency : application::kDependencies) {
    admin.add_readiness_check("circuit_" + std::string(application::to_string(dependency)),
                              [&circuits, dependency] {
                                const CircuitState state = circuits.circuit(dependency).state();
                                return observability::ReadinessResult{
                                    .ok = true, .detail = std::string(to_string(state))};
                              });
  }
}

observability::ReadinessResult credentials_readiness(const aws::CredentialsStatus& status) {
  if (status.usable) {
    return {.ok = true,
            .detail = status.stale ? "expired, served while the endpoint is unreachable" : "valid"};
  }
  if (status.last_failure) {
    return {.ok = false, .detail = status.last_failure->message, .code = status.last_failure->code};
  }
  return {.ok = false,
          .detail = status.cached ? "expired; a refresh is in progress" : "not fetched yet",
          .code = std::string(aws::kCredentialsUnavailable)};
}

void add_credentials_check(observability::AdminServer& admin, const aws::CredentialsCache& cache) {
  admin.add_readiness_check("credentials",
                            [&cache] { return credentials_readiness(cache.status()); });
}

void RunHealth::add_checks(observability::AdminServer& admin) {
  for (const auto& dependency : readiness_.statuses()) {
    admin.add_readiness_check(dependency.name, [this, name = dependency.name] {
      for (auto& status : readiness_.statuses()) {
        if (status.name == name) {
          return observability::ReadinessResult{status.up, std::move(status.detail),
                                                std::move(status.code)};
        }
      }
      return observability::ReadinessResult{};
    });
  }
}

}  // namespace ic::app
