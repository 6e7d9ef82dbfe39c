// run: the consumer, wired from the settings, until SIGTERM/SIGINT.
#include <signal.h>

#include <atomic>
#include <optional>
#include <thread>

#include "adapters/bank/core_banking_client.hpp"
#include "adapters/bank/notification_client.hpp"
#include "adapters/dynamodb/dynamodb_store.hpp"
#include "adapters/dynamodb/quarantine_store.hpp"
#include "app/aws_stack.hpp"
#include "app/bank_wiring.hpp"
#include "app/cli_support.hpp"
#include "app/health.hpp"
#include "app/liveness.hpp"
#include "app/shutdown_signals.hpp"
#include "app/startup_summary.hpp"
#include "app/system_adapters.hpp"
#include "app/telemetry/dependency_timing.hpp"
#include "app/telemetry/telemetry.hpp"
#include "application/bank_pacer.hpp"
#include "application/charge_event_decoder.hpp"
#include "application/charge_message_handler.hpp"
#include "application/dependency_circuits.hpp"
#include "application/hold_waiter.hpp"
#include "consumer/listener_container.hpp"
#include "core/aimd_limit.hpp"
#include "core/random.hpp"
#include "core/task.hpp"
#include "core/time.hpp"
#include "core/token_bucket.hpp"
#include "core/trace_context.hpp"
#include "event/event_loop.hpp"
#include "event/loop_heartbeat.hpp"
#include "event/run_blocking.hpp"
#include "observability/admin_server.hpp"

namespace ic::app {
namespace {

using namespace std::chrono_literals;

// The loop's heartbeat: its lag sample (ic_event_loop_lag_seconds) and what /health/live reads.
constexpr Millis kLoopHeartbeat{250};
// After a receiver died: what the stop may take beyond the grace before the process just ends.
constexpr Millis kFailureExitMargin{3000};
// How long that exit waits for its last log lines to be written.
constexpr Millis kExitLogFlush{1000};

// The producer's W3C `traceparent` message attribute when valid, else the X-Ray AWSTraceHeader
// SQS sets (docs/design.md §5); a malformed one is ignored, never a reason to fail a charge.
std::optional<TraceContext> trace_of(const consumer::Message& message) {
  if (const auto it = message.message_attributes.find("traceparent");
      it != message.message_attributes.end() && it->second.data_type.starts_with("String")) {
    if (auto context = parse_traceparent(it->second.value)) return context;
  }
  if (const auto it = message.attributes.find("AWSTraceHeader"); it != message.attributes.end()) {
    return parse_aws_trace_header(it->second);
  }
  return std::nullopt;
}

// One line saying which start-up step failed; returns the exit code.
int startup_failure(observability::Logger& log, std::string_view what, std::string_view detail) {
  log.error("start-up failed", {{"step", what}, {"detail", detail}});
  return 1;
}

// Returns the exit code: 0 after a graceful shutdown, non-zero when start-up failed.
int run_consumer(const RunSettings& settings, const aws::EnvLookup& env,
                 const std::string& non_default) {
  auto level = observability::parse_log_level(settings.log_level);
  if (!level) return report({"LOG_LEVEL: " + level.error()});
  auto admin_addr = observability::parse_host_port(settings.admin_addr);
  if (!admin_addr) return report({"ADMIN_ADDR: " + admin_addr.error()});
  auto bank_endpoint = bank::BankEndpoint::create(settings.core_banking_url, kBankTimeouts);
  auto notify_endpoint = bank::BankEndpoint::create(settings.notification_url, kBankTimeouts);
  if (!bank_endpoint) return report({"CORE_BANKING_URL: " + bank_endpoint.error()});
  if (!notify_endpoint) return report({"NOTIFICATION_URL: " + notify_endpoint.error()});
  auto bank_token =
      open_token_file("CORE_BANKING_TOKEN_FILE", settings.bank_auth.core_banking_token_file);
  if (!bank_token) return report(bank_token.error());
  auto notify_token =
      open_token_file("NOTIFICATION_TOKEN_FILE", settings.bank_auth.notification_token_file);
  if (!notify_token) return report(notify_token.error());

  ShutdownSignals signals;  // before any thread starts, so all of them inherit the mask
  observability::Logger log(*level);
  observability::MetricsRegistry metrics;
  Telemetry telemetry(log, metrics);
  AwsStack aws(settings.aws, env, &telemetry.aws, &telemetry.credentials);
  telemetry.credentials.attach(aws.credentials());

  dynamodb::DynamoDbIdempotencyStore store(aws.dynamodb(),
                                           charge_table(settings.table, settings.retention));
  sqs::SqsQueue queue(aws.sqs(), settings.queue_url, settings.dlq_url);
  http::CurlTransport bank_transport(settings.bank_auth.bank_tls);
  bank::CoreBankingClient bank(bank_transport, *bank_endpoint, bank_token->get());
  bank::NotificationClient notifier(bank_transport, *notify_endpoint, notify_token->get());
  // Every call to a dependency is timed (ic_dependency_seconds, dependency_timing.hpp).
  DependencyTimings timings(metrics);
  TimedStore timed_store(store, timings);
  TimedQueue timed_queue(queue, timings);
  TimedDebit timed_bank(bank, timings);
  TimedNotification timed_notifier(notifier, timings);
  const Clock& clock = real_clock();
  // Keeps the reason of a dead letter whose body alone fills the DLQ (docs/design.md §5 Sizes).
  dynamodb::DynamoDbQuarantineStore quarantine(
      aws.dynamodb(), charge_table(settings.table, settings.retention), clock);
  RandomTokens tokens;
  const std::string owner = worker_identity();

  // The event-driven core (docs/design.md §4): every delivery is a task on this one loop, run
  // by this thread in container.run().
  event::EventLoop loop;

  // Dependency outages (docs/design.md §3): circuits gate intake and the calls, the pacer
  // limits concurrent (and, with BANK_MAX_RPS, per-second) debits, and one waiter lets every
  // held probe, waiting debit and waiting copy give up at a stop.
  const OutageSettings& outage = settings.outage;
  application::LoopWaiter waiter(loop, clock);
  application::DependencyCircuits circuits(outage.circuit, clock, real_random(), waiter,
                                           &telemetry.circuits);
  telemetry.circuits.attach(circuits);
  AimdLimit bank_limit({.min = outage.bank_concurrency_min,
                        .max = outage.bank_concurrency_max,
                        .slow_call = outage.bank_slow_call,
                        .ramp = outage.ramp},
                       clock);
  std::optional<TokenBucket> bank_rate;
  if (outage.bank_max_rps > 0) {
    bank_rate.emplace(outage.bank_max_rps, outage.bank_max_rps, clock);
  }
  application::BankPacer paced_bank(timed_bank, bank_limit, bank_rate ? &*bank_rate : nullptr,
                                    clock, waiter, &telemetry.circuits);
  telemetry.circuits.on_bank_limit(bank_limit.limit(), 0);
  circuits.on_debit_closed([&bank_limit] { bank_limit.restart(); });

  const application::BankHorizon horizon{
      .window = settings.horizon.window,
      .inquiry = settings.horizon.status_inquiry ? &bank : nullptr};
  application::ChargeRecoveryService service(
      timed_store, paced_bank, timed_notifier, clock, tokens, telemetry.charges, waiter,
      {.lease = settings.lease, .owner = owner, .horizon = horizon}, &circuits);
  const application::ChargeMessageHandler handler(service);

  // A stuck turn is logged and counted; a loop that has not turned for LOOP_STALL_SECONDS is
  // not live, so the orchestrator restarts the process (docs/design.md §4, "Stalls").
  loop.observe(&telemetry.loop);
  event::LoopHeartbeat loop_beat(loop, kLoopHeartbeat, &telemetry.loop);
  loop_beat.start();
  Liveness liveness(loop_beat, real_monotonic_clock(), settings.loop_stall, &telemetry.listener);

  RunHealth health(settings, aws, telemetry, clock);
  observability::AdminServer admin(*admin_addr, metrics, &telemetry.listener);
  admin.set_liveness_check([&liveness] { return liveness.check(); });
  health.add_checks(admin);
  add_circuit_checks(admin, circuits);
  add_credentials_check(admin, aws.credentials());
  if (auto started = admin.start(); !started) {
    return startup_failure(log, "admin server", started.error());
  }
  health.start_probing();

  // A coroutine: the scopes set this delivery's task locals, so its log lines (and bank calls)
  // carry its message id and trace context while other deliveries interleave on the loop.
  auto handle = [&handler](const consumer::Message& message,
                           consumer::LeaseHeartbeat& heartbeat) -> Task<consumer::Disposition> {
    const MessageScope scope(message.message_id);
    const TraceScope trace(trace_of(message));
    co_return co_await handler.handle(message.body, message.receive_count, heartbeat);
  };
  consumer::ListenerContainer container(
      loop, timed_queue, handle,
      {.max_in_flight = static_cast<std::size_t>(settings.workers),
       .receivers = static_cast<std::size_t>(settings.receivers),
       // One batch per receiver waits ready, so slots do not idle through a receive; a
       // prefetched message older than a quarter lease is handed back before its visibility
       // (one lease from the receive) could lapse ahead of the heartbeat's first extension.
       .prefetch = consumer::kMaxReceiveMessages * static_cast<std::size_t>(settings.receivers),
       .prefetch_max_age = Millis{settings.lease} / 4,
       .shutdown_grace = settings.shutdown_grace,
       .key_attribute = std::string(application::kChargeIdField),
       .intake = &circuits,
       .quarantine = &quarantine,
       // A dead receiver stops the container, which still waits for its handlers: the process
       // ends (exit 1) within the grace and a margin even if one never finishes.
       .on_failure =
           [&liveness, &log, bound = Millis{settings.shutdown_grace} + kFailureExitMargin] {
             liveness.failing("a receiver died; the consumer is stopping", bound,
                              [&log, bound] { exit_overran(log, bound, kExitLogFlush); });
           }},
      &telemetry.listener);
  std::atomic<bool> signalled{false};
  // Declared after everything its callback uses, so it is joined before they are destroyed.
  const std::jthread signal_waiter = signals.on_signal(
      [&](int signal) {
        signalled = true;
        // The stop first, the line after it: nothing may delay the shutdown.
        // Held probes, waiting debits and copies give their messages back.
        loop.post([&waiter] { waiter.request_stop(); });
        container.request_stop();
        log.info("stopping", {{"signal", signal == SIGTERM ? "SIGTERM" : "SIGINT"}});
      },
      telemetry.listener);

  // One short attempt now, so that an SQS outage does not hold the start up; after a
  // transient failure it is read again at the first dead letter, after a permanent one DLQ
  // copies go out unchecked (SQS still refuses one too large).
  const auto dlq_limit = event::run_blocking(queue.dlq_size_limit(aws.probe_sqs()));
  if (!dlq_limit) {
    log.warn("could not read the DLQ's MaximumMessageSize",
             {{"code", dlq_limit.error().code},
              {"detail", dlq_limit.error().message},
              {"retryable", dlq_limit.error().retryable()}});
  }

  // Where this consumer talks to and how it was configured (startup_summary.hpp); never a secret.
  // (awsIdentitySource: a key with "credential" in it would be redacted by the logger.)
  log.info("consumer started",
           {{"owner", owner},
            {"queueUrl", settings.queue_url},
            {"table", settings.table},
            {"dlqMaxMessageSize", dlq_limit ? static_cast<std::int64_t>(*dlq_limit) : -1},
            {"workers", settings.workers},
            {"receivers", settings.receivers},
            {"leaseSeconds", settings.lease.count()},
            {"adminPort", admin.port()},
            {"region", settings.aws.region},
            {"sqsEndpoint", settings.aws.sqs_endpoint},
            {"dynamodbEndpoint", settings.aws.dynamodb_endpoint},
            {"stsEndpoint", aws::resolve_endpoint("sts", settings.aws.region, env)},
            {"coreBankingUrl", mask_url_user_info(settings.core_banking_url)},
            {"notificationUrl", mask_url_user_info(settings.notification_url)},
            {"awsIdentitySource", aws.credential_source()},
            {"nonDefaultSettings", non_default}});
  container.run();
  health.stop_probing();
  admin.stop();
  if (!signalled) {
    // Only a dead receiver stops the container without a signal (it was reported already).
    log.error("consumer stopped without a signal", {});
    return 1;
  }
  log.info("consumer stopped", {});
  return 0;
}

}  // namespace

void add_run(CLI::App& app, SettingsSource& settings, int& exit_code) {
  auto* cmd = app.add_subcommand("run", "Consume the charge queue until SIGTERM/SIGINT");
  describe(
      *cmd,
      "Example:\n  AWS_REGION=ap-south-1 CHARGE_QUEUE_URL=https://sqs.../charge-due \\\n"
      "  CHARGE_DLQ_URL=https://sqs.../charge-due-dlq IDEMPOTENCY_TABLE=charge-idempotency \\\n"
      "  CORE_BANKING_URL=https://core.bank.internal NOTIFICATION_URL=https://notify.internal \\\n"
      "  charge-recovery run --workers 32");
  settings.add_flags(*cmd, kAwsSettings);
  settings.add_flags(*cmd, {"CHARGE_QUEUE_URL", "CHARGE_DLQ_URL", "IDEMPOTENCY_TABLE",
                            "LEASE_SECONDS", "WORKERS", "CORE_BANKING_URL", "NOTIFICATION_URL",
                            "RETENTION_DAYS", "ADMIN_ADDR", "LOG_LEVEL", "SHUTDOWN_GRACE_SECONDS"});
  settings.add_flags(*cmd, {"PROBE_INTERVAL_SECONDS", "RECEIVERS", "LOOP_STALL_SECONDS"});
  settings.add_flags(*cmd, {"CIRCUIT_WINDOW", "CIRCUIT_MIN_CALLS", "CIRCUIT_FAILURE_PERCENT",
                            "CIRCUIT_PROBE_MIN_MS", "CIRCUIT_PROBE_MAX_MS", "CIRCUIT_RAMP_MS"});
  settings.add_flags(
      *cmd, {"BANK_MAX_RPS", "BANK_CONCURRENCY_MIN", "BANK_CONCURRENCY_MAX", "BANK_SLOW_CALL_MS"});
  settings.add_flags(*cmd, {"BANK_IDEMPOTENCY_WINDOW", "BANK_STATUS_INQUIRY"});
  settings.add_flags(*cmd, {"CORE_BANKING_TOKEN_FILE", "NOTIFICATION_TOKEN_FILE",
                            "BANK_TLS_CERT_FILE", "BANK_TLS_KEY_FILE", "BANK_TLS_CA_FILE"});
  cmd->callback([&settings, &exit_code] {
    auto run_settings = load_run_settings(settings);
    if (!run_settings) {
      exit_code = report(run_settings.error());
      return;
    }
    exit_code = run_consumer(*run_settings, settings.as_env(), non_default_settings(settings));
  });
}

}  // namespace ic::app
