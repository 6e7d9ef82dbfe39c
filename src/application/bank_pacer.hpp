// Backpressure toward core banking (docs/design.md §3, "Dependency outages"): every debit
// passes an adaptive concurrency limit (AIMD: in-flight debits shrink when the bank fails or
// slows) and, when BANK_MAX_RPS is set, a token bucket; callers above either wait, stop-aware.
//
//   BankPacer paced(bank, limit, &bucket, clock, waiter, &telemetry);
//   ChargeRecoveryService service(store, paced, ...);
#pragma once

#include <string_view>

#include "application/hold_waiter.hpp"
#include "core/aimd_limit.hpp"
#include "core/token_bucket.hpp"
#include "domain/ports.hpp"

namespace ic::application {

class PacerObserver {
 public:
  virtual ~PacerObserver() = default;
  virtual void on_bank_limit(int /*limit*/, int /*in_flight*/) {}
};

// Thread-safety: debit() tasks run on the loop's thread, many at once. Ownership: everything is
// borrowed.
class BankPacer final : public domain::AccountDebitPort {
 public:
  BankPacer(domain::AccountDebitPort& bank, AimdLimit& limit, TokenBucket* bucket,
            const Clock& clock, HoldWaiter& waiter, PacerObserver* observer = nullptr);

  // A stop while waiting answers DebitUnavailable without calling the bank.
  [[nodiscard]] Task<domain::DebitResult> debit(const domain::Charge& charge,
                                                std::string_view idempotency_key) override;

 private:
  void report();

  domain::AccountDebitPort& bank_;
  AimdLimit& limit_;
  TokenBucket* bucket_;
  const Clock& clock_;
  HoldWaiter& waiter_;
  PacerObserver* observer_;
};

}  // namespace ic::application
