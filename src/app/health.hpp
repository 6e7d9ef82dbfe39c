// What `run`'s readiness watches (docs/design.md §5, "Admin endpoints and telemetry"): the
// source queue, the DLQ and the table through probes on a slow timer; receives and store
// calls through the traffic itself.
#pragma once

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/dynamodb/dynamodb_store.hpp"
#include "adapters/sqs/queue_health.hpp"
#include "app/aws_stack.hpp"
#include "app/settings.hpp"
#include "app/telemetry/telemetry.hpp"
#include "application/dependency_circuits.hpp"
#include "idempotency/idempotency_store.hpp"
#include "observability/admin_server.hpp"
#include "observability/prober.hpp"
#include "observability/readiness.hpp"

namespace ic::app {

[[nodiscard]] std::vector<observability::DependencySpec> run_dependencies(
    std::chrono::seconds probe_interval);

// The warnings a source queue's settings deserve, as log messages; empty when it is sound.
[[nodiscard]] std::vector<std::string_view> check_queue_settings(
    std::chrono::seconds lease, const sqs::QueueSettings& settings);

// One readiness check per circuit (circuit_debit, circuit_notify, circuit_store), always ok,
// its detail the state: a process parked by an open circuit is healthy by design (restarting
// it would only probe again), so readiness stays 200 while the body shows why it is idle.
// `circuits` must outlive the admin server.
void add_circuit_checks(observability::AdminServer& admin,
                        const application::DependencyCircuits& circuits);

// The `credentials` readiness check: not ok while no valid credentials are cached, with the
// last refresh failure as code and detail; ok (detail "expired, served while the endpoint is
// unreachable") while static stability serves expired ones. Reads the cache, never waits.
[[nodiscard]] observability::ReadinessResult credentials_readiness(
    const aws::CredentialsStatus& status);
// `cache` must outlive the admin server.
void add_credentials_check(observability::AdminServer& admin, const aws::CredentialsCache& cache);

// Ownership: everything is borrowed and must outlive the probes. `sqs` and `store` should be
// built for probing (short timeouts, no retries): a probe's job is to notice.
struct ProbeTargets {
  sqs::SqsClient& sqs;
  std::string queue_url;
  std::string dlq_url;
  idempotency::IdempotencyStore& store;
  std::chrono::seconds lease;
  HealthTelemetry& telemetry;
};

// Queue probes export the depth; the first answer of the source queue is checked with
// check_queue_settings. The table is probed with a strongly consistent GetItem of a key no
// charge can have: the same permission and path as the claims' own reads. Each probe blocks the
// prober's thread for its call (event::run_blocking, on that thread's own loop).
[[nodiscard]] std::vector<observability::Probe> run_probes(const ProbeTargets& targets);

// The readiness of `run`, wired: fed by the telemetry, probed over the stack's probe clients,
// one admin check per dependency. Ownership: borrows the stack and the telemetry, which must
// outlive it; it must outlive the admin server it adds checks to.
class RunHealth {
 public:
  RunHealth(const RunSettings& settings, AwsStack& aws, Telemetry& telemetry, const Clock& clock);
  RunHealth(const RunHealth&) = delete;
  RunHealth& operator=(const RunHealth&) = delete;

  void add_checks(observability::AdminServer& admin);
  // Probes at once (ready as soon as every probe answered), then every probe interval.
  void start_probing() { prober_.start(); }
  void stop_probing() { prober_.stop(); }

 private:
  observability::Readiness readiness_;
  dynamodb::DynamoDbIdempotencyStore probe_store_;
  observability::Prober prober_;
};

}  // namespace ic::app
