#include "app/telemetry/charge_telemetry.hpp"

#include <utility>
#include <variant>

#include "app/telemetry/telemetry.hpp"
#include "core/overloaded.hpp"

namespace ic::app {

ChargeTelemetry::ChargeTelemetry(observability::Logger& log, observability::MetricsRegistry& m,
                                 const Clock& clock)
    : log_(log),
      claim_outcomes_(m.counter("ic_claim_outcomes_total", "Claim outcomes", {"outcome"})),
      settled_locally_(m.counter("ic_copies_settled_locally_total",
                                 "In-progress copies settled by this process's own holder")),
      debits_(m.counter("ic_debits_total", "Bank debit calls by result", {"result"})),
      inquiries_(m.counter("ic_debit_inquiries_total",
                           "Status inquiries before a debit was sent again, by result",
                           {"result"})),
      notifications_(
          m.counter("ic_notifications_total", "Notification calls by result", {"result"})),
      fenced_(m.counter("ic_fenced_total", "Writes refused because another worker holds the claim",
                        {"operation"})),
      store_errors_(
          m.counter("ic_store_errors_total", "Idempotency store failures", {"operation", "kind"})),
      warnings_(clock) {}

void ChargeTelemetry::copy_settled_locally(const domain::Charge& c, Millis waited) {
  settled_locally_.with({}).inc();
  log_.log(observability::LogLevel::Debug, "copy settled by this process's holder",
           {{"chargeId", c.id.value()},
            {"messageId", MessageScope::current()},
            {"waitedMs", waited.count()}});
}

void ChargeTelemetry::claim_decided(const domain::Charge& c,
                                    const idempotency::ClaimResult& result) {
  if (readiness_) readiness_->succeeded("store");
  const std::string_view outcome = idempotency::to_string(result.outcome);
  claim_outcomes_.with({outcome}).inc();
  const observability::LogLevel level = result.outcome == idempotency::ClaimOutcome::PayloadMismatch
                                            ? observability::LogLevel::Error
                                            : observability::LogLevel::Debug;
  log_.log(level, "claim decided",
           {{"chargeId", c.id.value()},
            {"messageId", MessageScope::current()},
            {"outcome", outcome},
            {"fence", result.record.fence},
            {"holder", result.record.owner},
            {"state", idempotency::to_string(result.record.state)},
            // The claim's identity and lease (ours when ACQUIRED), so a fault history can
            // check that only the live holder's final write is accepted (tools/chaos).
            {"claimToken", result.record.claim_token},
            {"leaseUntil", result.record.lease_until.time_since_epoch().count()}});
}

void ChargeTelemetry::debit_finished(const domain::Charge& c, const domain::DebitResult& result) {
  const std::string account = domain::masked(c.account);
  std::visit(
      [&](const auto& r) {
        using R = std::decay_t<decltype(r)>;
        if constexpr (std::is_same_v<R, domain::Debited>) {
          debits_.with({r.replayed ? "replayed" : "debited"}).inc();
          log_.debug("debited", {{"chargeId", c.id.value()},
                                 {"messageId", MessageScope::current()},
                                 {"accountId", account},
                                 {"amountMinor", c.amount.amount_minor()},
                                 {"currency", c.amount.currency().code()},
                                 {"debitRef", r.debit_ref},
                                 {"replayed", r.replayed}});
        } else if constexpr (std::is_same_v<R, domain::DebitRejected>) {
          debits_.with({"rejected"}).inc();
          log_.warn("debit rejected", {{"chargeId", c.id.value()},
                                       {"messageId", MessageScope::current()},
                                       {"accountId", account},
                                       {"code", r.code}});
        } else if constexpr (std::is_same_v<R, domain::DebitUnavailable>) {
          debits_.with({"unavailable"}).inc();
          const auto verdict = warnings_.next("debit_unavailable");
          log_.log(verdict.warn ? observability::LogLevel::Warn : observability::LogLevel::Debug,
                   "debit unavailable",
                   {{"chargeId", c.id.value()},
                    {"messageId", MessageScope::current()},
                    {"detail", r.detail},
                    {"retryAfterMs", r.retry_after ? r.retry_after->count() : 0},
                    {"suppressedWarnings", verdict.suppressed}});
        } else {
          static_assert(std::is_same_v<R, domain::DebitMisconfigured>);
          debits_.with({"misconfigured"}).inc();
          log_.error("debit misconfigured; fix the request or configuration, then redrive",
                     {{"chargeId", c.id.value()},
                      {"messageId", MessageScope::current()},
                      {"detail", r.detail}});
        }
      },
      result);
}

void ChargeTelemetry::notification_finished(const domain::Charge& c,
                                            const domain::NotificationResult& result) {
  if (const auto* failed = std::get_if<domain::NotificationFailed>(&result)) {
    notifications_.with({"failed"}).inc();
    log_.warn("notification failed; recording DEBITED_NOTIFICATION_FAILED",
              {{"chargeId", c.id.value()},
               {"messageId", MessageScope::current()},
               {"detail", failed->detail}});
  } else {
    notifications_.with({"sent"}).inc();
  }
}

void ChargeTelemetry::store_failed(const domain::Charge& c, idempotency::StoreOperation operation,
                                   const Error& error) {
  store_errors_.with({idempotency::to_string(operation), to_string(error.error_class)}).inc();
  // A permanent failure needs an operator every time; a retryable one repeats in an outage.
  const auto verdict =
      error.retryable() ? warnings_.next("store_unavailable") : WarningLimiter::Verdict{};
  log_.log(verdict.warn ? observability::LogLevel::Error : observability::LogLevel::Debug,
           "idempotency store failed",
           {{"chargeId", c.id.value()},
            {"messageId", MessageScope::current()},
            {"operation", idempotency::to_string(operation)},
            {"kind", to_string(error.error_class)},
            {"code", error.code},
            {"detail", error.message},
            {"ambiguous", error.ambiguous},
            {"suppressedWarnings", verdict.suppressed}});
  if (readiness_) readiness_->failed("store", error);  // after the failure's own line
}

void ChargeTelemetry::fenced(const domain::Charge& c, idempotency::StoreOperation operation,
                             std::string_view claim_token) {
  if (readiness_) readiness_->succeeded("store");  // refused, but the store answered
  fenced_.with({idempotency::to_string(operation)}).inc();
  log_.error("claim lost to another worker; not acknowledging",
             {{"chargeId", c.id.value()},
              {"messageId", MessageScope::current()},
              {"operation", idempotency::to_string(operation)},
              {"claimToken", claim_token}});
}

void ChargeTelemetry::recorded(const domain::Charge& c, idempotency::StoreOperation operation,
                               std::string_view claim_token) {
  if (readiness_) readiness_->succeeded("store");
  log_.debug("recorded", {{"chargeId", c.id.value()},
                          {"messageId", MessageScope::current()},
                          {"operation", idempotency::to_string(operation)},
                          {"claimToken", claim_token}});
}

void ChargeTelemetry::charge_finished(const domain::Charge& c,
                                      const application::ChargeSteps& steps,
                                      const consumer::Disposition& disposition) {
  if (!log_.enabled(observability::LogLevel::Info)) return;
  const auto [outcome, reason] = std::visit(
      Overloaded{[](const consumer::Ack&) {
                   return std::pair<std::string_view, std::string_view>{"ack", ""};
                 },
                 [](const consumer::RetryLater& r) {
                   return std::pair<std::string_view, std::string_view>{"retry_later", r.reason};
                 },
                 [](const consumer::DeadLetter& d) {
                   return std::pair<std::string_view, std::string_view>{"dead_letter", d.reason};
                 }},
      disposition);
  const auto* debited = steps.debit ? std::get_if<domain::Debited>(&*steps.debit) : nullptr;
  log_.info("charge handled",
            {{"chargeId", c.id.value()},
             {"messageId", MessageScope::current()},
             {"outcome", outcome},
             {"reason", reason},
             {"claim", steps.claim ? idempotency::to_string(*steps.claim) : ""},
             {"fence", steps.fence},
             {"status", steps.status},
             {"debitRef", debited != nullptr ? std::string_view{debited->debit_ref} : ""},
             {"replayed", debited != nullptr && debited->replayed},
             {"accountId", domain::masked(c.account)},
             {"amountMinor", c.amount.amount_minor()},
             {"currency", c.amount.currency().code()},
             {"claimMs", steps.claim_time.count()},
             {"debitMs", steps.debit_time.count()},
             {"notifyMs", steps.notify_time.count()},
             {"recordMs", steps.record_time.count()},
             {"waitedMs", steps.local_wait.count()}});
}

// The guard of the bank's idempotency window (docs/design.md §3): events of their own, so the
// per-charge lines above keep their shape.
void ChargeTelemetry::debit_inquired(const domain::Charge& c, const domain::InquiryResult& result) {
  std::string_view label = "failed";
  std::string detail;
  std::string debit_ref;
  if (const auto* found = std::get_if<domain::DebitFound>(&result)) {
    label = "found";
    debit_ref = found->debit_ref;
  } else if (std::holds_alternative<domain::DebitNotFound>(result)) {
    label = "not_found";
  } else {
    detail = std::get<domain::InquiryFailed>(result).detail;
  }
  inquiries_.with({label}).inc();
  log_.info("debit inquired", {{"chargeId", c.id.value()},
                               {"messageId", MessageScope::current()},
                               {"result", label},
                               {"debitRef", debit_ref},
                               {"detail", detail}});
}

void ChargeTelemetry::debit_uncertain(const domain::Charge& c, Instant first_attempt) {
  debits_.with({"uncertain"}).inc();
  log_.error("debit uncertain: the bank's idempotency window has passed; not sent again",
             {{"chargeId", c.id.value()},
              {"messageId", MessageScope::current()},
              {"firstAttemptAt", first_attempt.time_since_epoch().count()}});
}

}  // namespace ic::app
