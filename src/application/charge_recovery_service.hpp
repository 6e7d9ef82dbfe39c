// ChargeRecoveryService: one delivery of a charge in, one disposition out (docs/design.md §3).
// Claim the chargeId, and only as the claim holder debit, notify and record the result.
//
//   ChargeRecoveryService service(store, bank, notifier, clock, tokens, observer, waiter, config);
//   consumer::Disposition d = co_await service.handle(
//       {.charge = c, .payload_hash = h, .receive_count = 1}, heartbeat);
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "application/charge_observer.hpp"
#include "application/debit_horizon.hpp"
#include "application/dependency_circuits.hpp"
#include "application/hold_waiter.hpp"
#include "application/local_holds.hpp"
#include "application/recheck_policy.hpp"
#include "consumer/disposition.hpp"
#include "consumer/lease_heartbeat.hpp"
#include "core/task.hpp"
#include "domain/charge.hpp"
#include "domain/charge_status.hpp"
#include "domain/ports.hpp"
#include "idempotency/idempotency_store.hpp"

namespace ic::application {

struct ServiceConfig {
  Millis lease{60'000};
  std::string owner;       // this worker's identity, recorded on each claim
  std::string key_prefix;  // prepended to chargeId to form the table key
  // Backoff for transient failures grows with the delivery's receive count, up to the cap.
  Millis retry_base{2'000};
  Millis retry_cap{300'000};
  // A fenced completion comes back soon: the redelivery will find the other holder's state.
  Millis fenced_retry{1'000};
  // The bank's memory of idempotency keys: no blind debit past it (docs/design.md §3).
  BankHorizon horizon;
};

struct Delivery {
  const domain::Charge& charge;
  std::string_view payload_hash;
  int receive_count = 1;  // SQS ApproximateReceiveCount, 1 on first delivery
};

// Thread-safety: handle() tasks run on one event loop's thread (the process's consumer loop),
// any number in flight at once; its mutable state is the window of effect durations that times
// in-progress re-checks and the registry of the claims its tasks hold. One service is one
// process's: a copy of a charge another of its tasks holds waits for that task's final write
// (LocalHolds) instead of asking the store, or re-checking later. Ownership: every port, the
// clock and the waiter (which times probes and local waits and ends them at a stop) are
// borrowed and must outlive the service. With `circuits` (docs/design.md §3, "Dependency
// outages") the store, debit and notify calls go through their circuits: a message finding the
// store or debit circuit open is handed back untouched (RetryLater, reason circuit_open), the
// probe's message is held by its worker across failed probes, and an open notify circuit records
// DEBITED_NOTIFICATION_FAILED at once.
class ChargeRecoveryService {
 public:
  ChargeRecoveryService(idempotency::IdempotencyStore& store, domain::AccountDebitPort& bank,
                        domain::NotificationPort& notifier, const Clock& clock,
                        domain::TokenSource& tokens, ChargeObserver& observer, HoldWaiter& waiter,
                        ServiceConfig config, DependencyCircuits* circuits = nullptr);

  [[nodiscard]] Task<consumer::Disposition> handle(const Delivery& delivery,
                                                   consumer::LeaseHeartbeat& heartbeat);

  [[nodiscard]] Millis transient_backoff(int receive_count) const;

 private:
  struct Claim {
    const domain::Charge& charge;
    std::string key;
    std::string token;
    ChargeSteps& steps;  // the delivery's, reported when it ends
    // The record's firstAttemptAt once claimed: the bank's window counts from it.
    std::optional<Instant> first_attempt;
  };
  // The circuit permits of one delivery (Allowed throughout without circuits).
  struct Permits {
    CircuitPermit store{.admission = Admission::Allowed};
    CircuitPermit debit{.admission = Admission::Allowed};
  };

  [[nodiscard]] Task<consumer::Disposition> decide(const Delivery& delivery,
                                                   consumer::LeaseHeartbeat& heartbeat,
                                                   ChargeSteps& steps);
  // Takes the store and debit permits; a disposition when the delivery must wait instead.
  [[nodiscard]] std::optional<consumer::Disposition> admit(Permits& permits);
  [[nodiscard]] Task<idempotency::ClaimReply> claim_once(const Delivery& delivery,
                                                         const Claim& claim, Instant at);
  // The store probe failed: keep the message (visibility only), retry the claim at each probe.
  [[nodiscard]] Task<std::expected<idempotency::ClaimResult, consumer::Disposition>>
  hold_store_probe(const Delivery& delivery, const Claim& claim, Permits& permits,
                   consumer::LeaseHeartbeat& heartbeat);
  // The debit, through the circuit; `stopped` when the process stopped while this task held the
  // probe's message.
  [[nodiscard]] Task<domain::DebitResult> debit_through_circuit(const Claim& claim,
                                                                Permits& permits, bool& stopped);
  void record_store(const CircuitPermit& permit, const idempotency::ClaimReply& result);
  void observe_store(const Error* error);
  void abandon(const CircuitPermit& permit, Dependency dependency);
  [[nodiscard]] consumer::Disposition parked(Dependency dependency) const;

  [[nodiscard]] Task<consumer::Disposition> on_refusal(const Delivery& delivery, const Claim& claim,
                                                       const idempotency::ClaimResult& result,
                                                       consumer::LeaseHeartbeat& heartbeat);
  // A copy of a claim a task of this process holds (token `holder`): waits, keeping the copy's
  // visibility, for that holder's end and answers as a re-check would, without the queue or the
  // store: after its final write as the record reads, after it gave the claim back "soon, to
  // claim it", and after a stop "soon, to whoever is left". Nothing when the holder is not known
  // here.
  [[nodiscard]] Task<std::optional<consumer::Disposition>> settle_locally(
      const Delivery& delivery, const Claim& claim, std::string holder,
      consumer::LeaseHeartbeat& heartbeat);
  [[nodiscard]] Task<consumer::Disposition> run_effect(const Delivery& delivery, const Claim& claim,
                                                       consumer::LeaseHeartbeat& heartbeat,
                                                       Permits& permits, LocalHolds::Hold& hold);
  // Before the debit (docs/design.md §3, "The bank's memory of keys"): when an earlier attempt
  // may have reached the bank, asks it (if it can be asked) and records DONE when it found the
  // debit; past the bank's window from the claim's first attempt, records DEBIT_UNCERTAIN;
  // nothing when the debit may be sent.
  [[nodiscard]] Task<std::optional<consumer::Disposition>> before_debit(const Claim& claim,
                                                                        bool earlier_attempt,
                                                                        Permits& permits,
                                                                        LocalHolds::Hold& hold);
  [[nodiscard]] Task<consumer::Disposition> record_uncertain(const Claim& claim,
                                                             Instant first_attempt,
                                                             LocalHolds::Hold& hold);
  // The final write of a charge that ends FAILED with `status` (FAILED_PERMANENT,
  // DEBIT_UNCERTAIN), then `dead_letter`.
  [[nodiscard]] Task<consumer::Disposition> record_failure(const Claim& claim,
                                                           domain::ChargeStatus status,
                                                           std::string reason,
                                                           consumer::DeadLetter dead_letter,
                                                           LocalHolds::Hold& hold);
  [[nodiscard]] Task<domain::NotificationResult> notify(const Claim& claim,
                                                        const domain::Debited& debited);
  [[nodiscard]] Task<consumer::Disposition> record_debit(const Claim& claim,
                                                         const domain::Debited& debited,
                                                         const domain::NotificationResult& notified,
                                                         LocalHolds::Hold& hold);
  [[nodiscard]] Task<consumer::Disposition> record_rejection(const Claim& claim,
                                                             const domain::DebitRejected& rejected,
                                                             LocalHolds::Hold& hold);
  // `reason` labels the RetryLater: debit_unavailable, or debit_misconfigured (a 4xx such as a
  // 404 from a wrong CORE_BANKING_URL path), which an operator fixes, not the bank; `debit`
  // carries the bank's Retry-After, if any.
  [[nodiscard]] Task<consumer::Disposition> give_back(const Delivery& delivery, const Claim& claim,
                                                      const domain::DebitResult& debit,
                                                      std::string_view reason);
  // Maps the outcome of complete/fail: written → `on_written`, fenced or failed → no ack.
  [[nodiscard]] consumer::Disposition after_final_write(const Claim& claim,
                                                        idempotency::StoreOperation operation,
                                                        const idempotency::WriteReply& written,
                                                        consumer::Disposition on_written);

  idempotency::IdempotencyStore& store_;
  domain::AccountDebitPort& bank_;
  domain::NotificationPort& notifier_;
  const Clock& clock_;
  domain::TokenSource& tokens_;
  ChargeObserver& observer_;
  const ServiceConfig config_;
  DependencyCircuits* circuits_;
  EffectDurations effect_durations_;
  LocalHolds local_holds_;
};

}  // namespace ic::application
