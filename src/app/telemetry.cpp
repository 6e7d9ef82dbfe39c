#include "app/telemetry.hpp"

#include <variant>

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

Telemetry::Telemetry(obs::Logger& log, obs::MetricsRegistry& m)
    : log_(log),
      received_(m.counter("ic_messages_received_total", "Messages received from the queue")),
      receive_errors_(m.counter("ic_receive_errors_total", "Failed receive calls", {"code"})),
      claim_outcomes_(m.counter("ic_claim_outcomes_total", "Claim outcomes", {"outcome"})),
      dispositions_(m.counter("ic_dispositions_total", "Dispositions by kind and reason",
                              {"kind", "reason"})),
      dlq_forwards_(m.counter("ic_dlq_forwards_total", "Messages dead-lettered", {"reason"})),
      dlq_attributes_dropped_(m.counter("ic_dlq_attributes_dropped_total",
                                        "Producer attributes left out of DLQ copies")),
      debits_(m.counter("ic_debits_total", "Bank debit calls by result", {"result"})),
      notifications_(
          m.counter("ic_notifications_total", "Notification calls by result", {"result"})),
      fenced_(m.counter("ic_fenced_total", "Writes refused because another worker holds the claim",
                        {"operation"})),
      store_errors_(
          m.counter("ic_store_errors_total", "Idempotency store failures", {"operation", "kind"})),
      batch_failures_(
          m.counter("ic_batch_entry_failures_total", "Failed batch entries", {"action", "final"})),
      heartbeats_(m.counter("ic_heartbeats_total", "Lease heartbeats", {"extended"})),
      aws_requests_(m.counter("ic_aws_requests_total", "AWS HTTP attempts",
                              {"service", "operation", "result"})),
      aws_retries_(m.counter("ic_aws_retries_total", "AWS attempts that are retried",
                             {"service", "operation"})),
      in_flight_(m.gauge("ic_in_flight_messages", "Handlers running now")),
      processing_(m.histogram("ic_processing_seconds", "Time from handler start to disposition",
                              obs::kDefaultSecondsBuckets)),
      thread_exceptions_(m.counter("ic_thread_exceptions_total",
                                   "Exceptions that reached a thread boundary", {"thread"})),
      ready_(m.gauge("ic_ready", "1 while /health/ready answers 200")),
      dependency_up_(
          m.gauge("ic_dependency_up", "1 while the dependency counts as up", {"dependency"})),
      queue_messages_(m.gauge("ic_queue_messages", "Approximate messages by queue and state",
                              {"queue", "state"})) {
  m.gauge("ic_build_info", "Always 1; the labels name the running build", {"version", "commit"})
      .with({kVersion, kCommit})
      .set(1);
  m.add_collector(obs::process_metrics_text);
}

void Telemetry::claim_decided(const charge::Charge& c, const idem::ClaimResult& result) {
  if (readiness_) readiness_->succeeded("store");
  const std::string_view outcome = idem::to_string(result.outcome);
  claim_outcomes_.with({outcome}).inc();
  const obs::LogLevel level = result.outcome == idem::ClaimOutcome::PayloadMismatch
                                  ? obs::LogLevel::Error
                                  : obs::LogLevel::Info;
  log_.log(level, "claim decided",
           {{"chargeId", c.id.value()},
            {"messageId", MessageScope::current()},
            {"outcome", outcome},
            {"fence", result.record.fence},
            {"holder", result.record.owner},
            {"state", idem::to_string(result.record.state)},
            // The claim's identity and lease (ours when ACQUIRED), so a fault history can
            // check that only the live holder's final write is accepted (tools/chaos).
            {"claimToken", result.record.claim_token},
            {"leaseUntil", result.record.lease_until.time_since_epoch().count()}});
}

void Telemetry::debit_finished(const charge::Charge& c, const charge::DebitResult& result) {
  const std::string account = charge::masked(c.account);
  std::visit(
      [&](const auto& r) {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, charge::Debited>) {
          debits_.with({r.replayed ? "replayed" : "debited"}).inc();
          log_.info("debited", {{"chargeId", c.id.value()},
                                {"messageId", MessageScope::current()},
                                {"accountId", account},
                                {"amountMinor", c.amount.amount_minor()},
                                {"currency", c.amount.currency().code()},
                                {"debitRef", r.debit_ref},
                                {"replayed", r.replayed}});
        } else if constexpr (std::is_same_v<R, charge::DebitRejected>) {
          debits_.with({"rejected"}).inc();
          log_.warn("debit rejected", {{"chargeId", c.id.value()},
                                       {"messageId", MessageScope::current()},
                                       {"accountId", account},
                                       {"code", r.code}});
        } else if constexpr (std::is_same_v<R, charge::DebitUnavailable>) {
          debits_.with({"unavailable"}).inc();
          log_.warn("debit unavailable", {{"chargeId", c.id.value()},
                                          {"messageId", MessageScope::current()},
                                          {"detail", r.detail}});
        } else {
          static_assert(std::is_same_v<R, charge::DebitMisconfigured>);
          debits_.with({"misconfigured"}).inc();
          log_.error("debit misconfigured; fix the request or configuration, then redrive",
                     {{"chargeId", c.id.value()},
                      {"messageId", MessageScope::current()},
                      {"detail", r.detail}});
        }
      },
      result);
}

void Telemetry::notification_finished(const charge::Charge& c,
                                      const charge::NotificationResult& result) {
  if (const auto* failed = std::get_if<charge::NotificationFailed>(&result)) {
    notifications_.with({"failed"}).inc();
    log_.warn("notification failed; recording DEBITED_NOTIFICATION_FAILED",
              {{"chargeId", c.id.value()},
               {"messageId", MessageScope::current()},
               {"detail", failed->detail}});
  } else {
    notifications_.with({"sent"}).inc();
  }
}

void Telemetry::store_failed(const charge::Charge& c, idem::StoreOperation operation,
                             const Error& error) {
  store_errors_.with({idem::to_string(operation), to_string(error.error_class)}).inc();
  log_.error("idempotency store failed", {{"chargeId", c.id.value()},
                                          {"messageId", MessageScope::current()},
                                          {"operation", idem::to_string(operation)},
                                          {"kind", to_string(error.error_class)},
                                          {"code", error.code},
                                          {"detail", error.message},
                                          {"ambiguous", error.ambiguous}});
  if (readiness_) readiness_->failed("store", error);  // after the failure's own line
}

void Telemetry::fenced(const charge::Charge& c, idem::StoreOperation operation,
                       std::string_view claim_token) {
  if (readiness_) readiness_->succeeded("store");  // refused, but the store answered
  fenced_.with({idem::to_string(operation)}).inc();
  log_.error("claim lost to another worker; not acknowledging",
             {{"chargeId", c.id.value()},
              {"messageId", MessageScope::current()},
              {"operation", idem::to_string(operation)},
              {"claimToken", claim_token}});
}

void Telemetry::recorded(const charge::Charge& c, idem::StoreOperation operation,
                         std::string_view claim_token) {
  if (readiness_) readiness_->succeeded("store");
  log_.info("recorded", {{"chargeId", c.id.value()},
                         {"messageId", MessageScope::current()},
                         {"operation", idem::to_string(operation)},
                         {"claimToken", claim_token}});
}

void Telemetry::on_received(std::size_t count) {
  if (readiness_) readiness_->succeeded("receive");
  received_.with({}).inc(count);
}

void Telemetry::on_receive_error(const Error& error, Millis delay) {
  receive_errors_.with({error.code}).inc();
  log_.warn("receive failed; backing off", {{"code", error.code},
                                            {"class", to_string(error.error_class)},
                                            {"detail", error.message},
                                            {"ambiguous", error.ambiguous},
                                            {"backoffMs", delay.count()}});
  if (readiness_) readiness_->failed("receive", error);
}

void Telemetry::on_disposition(consumer::DispositionKind kind, std::string_view reason,
                               Millis processing_time) {
  dispositions_.with({consumer::to_string(kind), reason}).inc();
  if (kind == consumer::DispositionKind::DeadLetter) dlq_forwards_.with({reason}).inc();
  processing_.with({}).observe(std::chrono::duration<double>(processing_time).count());
}

void Telemetry::on_handler_error(std::string_view message_id, std::string_view what) {
  log_.error("handler failed; the message returns after its visibility timeout",
             {{"messageId", message_id}, {"detail", what}});
}

void Telemetry::on_dlq_send_failed(std::string_view message_id, const Error& error) {
  log_.error("DLQ forward failed; message kept for retry", {{"messageId", message_id},
                                                            {"code", error.code},
                                                            {"detail", error.message},
                                                            {"ambiguous", error.ambiguous}});
}

void Telemetry::on_dlq_copy_refused(std::string_view message_id, std::string_view next,
                                    const Error& error) {
  log_.warn(
      "DLQ refused the copy; sending a smaller one",
      {{"messageId", message_id}, {"next", next}, {"code", error.code}, {"detail", error.message}});
}

void Telemetry::on_dlq_attributes_dropped(std::string_view message_id,
                                          std::span<const std::string> names) {
  dlq_attributes_dropped_.with({}).inc(names.size());
  std::string list;
  for (const auto& name : names) list.append(list.empty() ? "" : ",").append(name);
  log_.warn("producer attributes left out of the DLQ copy",
            {{"messageId", message_id}, {"count", names.size()}, {"attributes", list}});
}

void Telemetry::on_batch_entry_failed(consumer::BatchAction action, std::string_view message_id,
                                      const Error& error, bool final) {
  batch_failures_.with({consumer::to_string(action), final ? "true" : "false"}).inc();
  log_.log(final ? obs::LogLevel::Error : obs::LogLevel::Warn, "batch entry failed",
           {{"messageId", message_id},
            {"action", consumer::to_string(action)},
            {"code", error.code},
            {"detail", error.message},
            {"ambiguous", error.ambiguous},
            {"final", final}});
}

void Telemetry::on_heartbeat(std::string_view message_id, consumer::ClaimExtension extension) {
  heartbeats_.with({consumer::to_string(extension)}).inc();
  if (extension == consumer::ClaimExtension::Lost) {
    log_.warn("heartbeat found the claim gone", {{"messageId", message_id}});
  } else if (extension == consumer::ClaimExtension::Unanswered) {
    // The store's own failure is logged where it happened; this says the claim is at risk.
    log_.warn("heartbeat could not extend the claim; retrying", {{"messageId", message_id}});
  }
}

void Telemetry::on_heartbeat_visibility_failed(std::string_view message_id, const Error& error) {
  log_.warn("heartbeat could not extend visibility", {{"messageId", message_id},
                                                      {"code", error.code},
                                                      {"detail", error.message},
                                                      {"ambiguous", error.ambiguous}});
}

void Telemetry::on_in_flight(std::size_t count) {
  in_flight_.with({}).set(static_cast<double>(count));
}

void Telemetry::on_returned_unstarted(std::size_t count) {
  log_.info("returned unstarted messages to the queue", {{"count", count}});
}

void Telemetry::on_grace_exceeded(std::size_t still_running) {
  log_.warn("shutdown grace exceeded; still waiting for handlers",
            {{"stillRunning", still_running}});
}

void Telemetry::on_attempt(const aws::AttemptEvent& event) {
  aws_requests_.with({event.service, event.operation, event.result}).inc();
  if (event.will_retry) {
    aws_retries_.with({event.service, event.operation}).inc();
    log_.warn("AWS call will be retried", {{"service", event.service},
                                           {"operation", event.operation},
                                           {"attempt", event.attempt},
                                           {"result", event.result},
                                           {"httpStatus", event.http_status}});
  }
}

void Telemetry::on_thread_exception(std::string_view thread, std::string_view what) noexcept {
  try {
    thread_exceptions_.with({thread}).inc();
    log_.error("exception reached a thread boundary", {{"thread", thread}, {"detail", what}});
  } catch (...) {  // noexcept: a report that fails (out of memory) must not terminate
  }
}

void Telemetry::on_readiness(std::span<const obs::DependencyStatus> dependencies, bool ready) {
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

void Telemetry::queue_depth(std::string_view queue, const sqs::QueueDepth& depth) {
  for (const auto& [state, value] :
       {std::pair{"visible", depth.visible}, std::pair{"in_flight", depth.in_flight},
        std::pair{"delayed", depth.delayed}}) {
    if (value) queue_messages_.with({queue, state}).set(static_cast<double>(*value));
  }
}

void Telemetry::queue_setting_warning(std::string_view problem, std::chrono::seconds lease,
                                      const sqs::QueueSettings& settings) {
  const auto number_or_none = [](std::string_view key, std::optional<std::int64_t> value) {
    return value ? obs::LogField(key, *value) : obs::LogField(key, "none");
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
