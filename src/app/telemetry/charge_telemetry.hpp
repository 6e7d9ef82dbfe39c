// What the charge service reports (application::ChargeObserver): claims, debits,
// notifications and store writes, as log lines and metrics. At info a delivery of a charge
// writes one line, `charge handled`, with its outcome, ids and step timings; the per-step lines
// (`claim decided`, `debited`, `recorded`, ...) are debug, and what needs an operator (a
// rejected debit, a failed notification, a fenced write, a payload mismatch) adds its own warn
// or error line.
#pragma once

#include "app/telemetry/warning_limiter.hpp"
#include "application/charge_observer.hpp"
#include "observability/json_log.hpp"
#include "observability/metrics.hpp"
#include "observability/readiness.hpp"

namespace ic::app {

// Thread-safety: every hook is called concurrently from workers; the logger and the metric
// series are thread-safe. Ownership: borrows logger and registry, and the readiness it feeds.
class ChargeTelemetry final : public application::ChargeObserver {
 public:
  // Retry warnings (debit unavailable, a retryable store failure) are rate-limited per kind:
  // the first of each interval at warn/error level with the count held back since, the others
  // at debug, so the per-charge lines the fault histories read (tools/chaos, at debug) stay.
  ChargeTelemetry(observability::Logger& log, observability::MetricsRegistry& metrics,
                  const Clock& clock = real_clock());

  // From now on store calls feed the "store" dependency. Call before any thread reports.
  void feed(observability::Readiness& readiness) { readiness_ = &readiness; }

  void claim_decided(const domain::Charge& c, const idempotency::ClaimResult& result) override;
  void copy_settled_locally(const domain::Charge& c, Millis waited) override;
  void debit_finished(const domain::Charge& c, const domain::DebitResult& result) override;
  void debit_inquired(const domain::Charge& c, const domain::InquiryResult& result) override;
  void debit_uncertain(const domain::Charge& c, Instant first_attempt) override;
  void notification_finished(const domain::Charge& c,
                             const domain::NotificationResult& result) override;
  void store_failed(const domain::Charge& c, idempotency::StoreOperation operation,
                    const Error& error) override;
  void fenced(const domain::Charge& c, idempotency::StoreOperation operation,
              std::string_view claim_token) override;
  void recorded(const domain::Charge& c, idempotency::StoreOperation operation,
                std::string_view claim_token) override;
  void charge_finished(const domain::Charge& c, const application::ChargeSteps& steps,
                       const consumer::Disposition& disposition) override;

 private:
  observability::Logger& log_;
  observability::CounterFamily& claim_outcomes_;
  observability::CounterFamily& settled_locally_;
  observability::CounterFamily& debits_;
  observability::CounterFamily& inquiries_;
  observability::CounterFamily& notifications_;
  observability::CounterFamily& fenced_;
  observability::CounterFamily& store_errors_;
  observability::Readiness* readiness_ = nullptr;
  WarningLimiter warnings_;
};

}  // namespace ic::app
