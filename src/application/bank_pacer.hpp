// Backpressure toward core banking (docs/design.md §3, "Dependency outages"): every debit
// passes an adaptive concurrency limit (AIMD: in-flight debits shrink when the bank fails or
// slows) and, when BANK_MAX_RPS is set, a token bucket; callers above either wait, stop-aware.
// Callers over the limit wait in one first-come-first-served line: each released slot wakes the
// one waiter it is handed to (a limit that grew wakes as many as it grew by), a stop wakes all.
//
//   BankPacer paced(bank, limit, &bucket, clock, waiter, &telemetry);
//   ChargeRecoveryService service(store, paced, ...);
#pragma once

#include <deque>
#include <optional>
#include <string_view>

#include "application/hold_waiter.hpp"
#include "core/aimd_limit.hpp"
#include "core/token_bucket.hpp"
#include "domain/ports.hpp"
#include "event/wait_queue.hpp"

namespace ic::application {

class PacerObserver {
 public:
  virtual ~PacerObserver() = default;
  virtual void on_bank_limit(int /*limit*/, int /*in_flight*/) {}
};

// Thread-safety: debit() tasks run on the loop's thread (the waiter's), many at once. Ownership:
// everything is borrowed; destroyed with no debit waiting (after a stop, say).
class BankPacer final : public domain::AccountDebitPort {
 public:
  BankPacer(domain::AccountDebitPort& bank, AimdLimit& limit, TokenBucket* bucket,
            const Clock& clock, HoldWaiter& waiter, PacerObserver* observer = nullptr);

  // A stop while waiting answers DebitUnavailable without calling the bank.
  [[nodiscard]] Task<domain::DebitResult> debit(const domain::Charge& charge,
                                                std::string_view idempotency_key) override;

 private:
  // The slot's ticket; none once a stop came first.
  [[nodiscard]] Task<std::optional<AimdLimit::Ticket>> take_slot();
  void give_back(AimdLimit::Ticket ticket, Millis latency, bool failed);
  // Takes a slot for each waiter the limit has room for, first in line first, and wakes it.
  void hand_out();
  void watch_ramp();
  [[nodiscard]] Task<void> follow_ramp();
  void report();

  domain::AccountDebitPort& bank_;
  AimdLimit& limit_;
  TokenBucket* bucket_;
  const Clock& clock_;
  HoldWaiter& waiter_;
  PacerObserver* observer_;
  event::WaitQueue slots_;  // debits waiting for a slot; woken only with one taken for them
  // The tickets of slots taken for woken waiters, in the order they were woken: the order the
  // loop resumes them in, each taking the first.
  std::deque<AimdLimit::Ticket> handed_;
  bool watching_ = false;  // a follow_ramp() task runs, or is posted
};

}  // namespace ic::application
