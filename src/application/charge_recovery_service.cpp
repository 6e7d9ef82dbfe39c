#include "application/charge_recovery_service.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "core/backoff.hpp"
#include "domain/charge_status.hpp"

namespace ic::application {
namespace {

using consumer::Ack;
using consumer::DeadLetter;
using consumer::Disposition;
using consumer::RetryLater;
using domain::Charge;
using domain::Debited;
using domain::DebitMisconfigured;
using domain::DebitRejected;
using domain::DebitUnavailable;
using domain::NotificationResult;
using domain::NotificationSent;
using domain::to_string;
using idempotency::ClaimOutcome;
using idempotency::StoreOperation;
using idempotency::WriteOutcome;

// The circuit's reading of an outcome: a failure is the dependency not answering usefully; an
// answer, even a refusal, is a success (docs/design.md §3).
CallOutcome store_outcome(const Error& error) {
  return error.retryable() ? CallOutcome::Failure : CallOutcome::Success;
}

CallOutcome debit_outcome(const domain::DebitResult& debit) {
  if (std::holds_alternative<DebitUnavailable>(debit)) return CallOutcome::Failure;
  if (std::holds_alternative<DebitMisconfigured>(debit)) return CallOutcome::Ignored;
  return CallOutcome::Success;
}

std::optional<Millis> retry_after_of(const domain::DebitResult& debit) {
  if (const auto* unavailable = std::get_if<DebitUnavailable>(&debit)) {
    return unavailable->retry_after;
  }
  return std::nullopt;
}

// Keeps only the message's visibility alive while no claim is held (a store probe's message,
// a copy waiting for its local holder): there is no claim to extend, so every tick counts as
// extended.
Task<consumer::ClaimExtension> no_claim() {
  co_return consumer::ClaimExtension::Extended;
}

// A coroutine with its own copies, not a capturing coroutine lambda, whose frame would refer to
// the closure inside the heartbeat's std::function (C++ Core Guidelines CP.51).
Task<consumer::ClaimExtension> extend_claim(idempotency::IdempotencyStore& store,
                                            ChargeObserver& observer, Charge charge,
                                            std::string key, std::string token, Instant until) {
  auto extended = co_await store.extend(key, token, until);
  if (!extended) {
    observer.store_failed(charge, StoreOperation::Extend, extended.error());
    co_return consumer::ClaimExtension::Unanswered;
  }
  co_return *extended == WriteOutcome::Written ? consumer::ClaimExtension::Extended
                                               : consumer::ClaimExtension::Lost;
}

DeadLetter dead_letter(std::string_view reason, std::string detail, const Charge& charge) {
  return DeadLetter{std::string(reason), std::move(detail), charge.id.value()};
}

}  // namespace

ChargeRecoveryService::ChargeRecoveryService(idempotency::IdempotencyStore& store,
                                             domain::AccountDebitPort& bank,
                                             domain::NotificationPort& notifier, const Clock& clock,
                                             domain::TokenSource& tokens, ChargeObserver& observer,
                                             HoldWaiter& waiter, ServiceConfig config,
                                             DependencyCircuits* circuits)
    : store_(store),
      bank_(bank),
      notifier_(notifier),
      clock_(clock),
      tokens_(tokens),
      observer_(observer),
      config_(std::move(config)),
      circuits_(circuits),
      local_holds_(clock, waiter) {}

Millis ChargeRecoveryService::transient_backoff(int receive_count) const {
  return backoff_delay(receive_count - 1, config_.retry_base, config_.retry_cap, Jitter::None);
}

Task<Disposition> ChargeRecoveryService::handle(const Delivery& delivery,
                                                consumer::LeaseHeartbeat& heartbeat) {
  ChargeSteps steps;
  Disposition disposition = co_await decide(delivery, heartbeat, steps);
  observer_.charge_finished(delivery.charge, steps, disposition);
  co_return disposition;
}

Task<Disposition> ChargeRecoveryService::decide(const Delivery& delivery,
                                                consumer::LeaseHeartbeat& heartbeat,
                                                ChargeSteps& steps) {
  Claim claim{delivery.charge, config_.key_prefix + delivery.charge.id.value(), tokens_.next(),
              steps};
  // A copy of a charge this process is handling asks the store nothing: it waits here.
  if (auto holder = local_holds_.live_token(claim.key, delivery.payload_hash)) {
    auto settled = co_await settle_locally(delivery, claim, std::move(*holder), heartbeat);
    if (settled) co_return std::move(*settled);
  }
  Permits permits;
  if (auto wait = admit(permits)) co_return std::move(*wait);
  const Instant claimed_at = clock_.now();
  auto result = co_await claim_once(delivery, claim, claimed_at);
  record_store(permits.store, result);
  if (!result) {
    observer_.store_failed(delivery.charge, StoreOperation::Claim, result.error());
    if (permits.store.admission != Admission::Probe || !result.error().retryable()) {
      abandon(permits.debit, Dependency::Debit);
      co_return RetryLater{transient_backoff(delivery.receive_count), "store_unavailable"};
    }
    auto held = co_await hold_store_probe(delivery, claim, permits, heartbeat);
    if (!held) co_return std::move(held.error());
    result = std::move(*held);
  }
  steps.claim = result->outcome;
  steps.fence = result->record.fence;
  observer_.claim_decided(delivery.charge, *result);
  if (result->outcome != ClaimOutcome::Acquired) {
    abandon(permits.debit, Dependency::Debit);
    co_return co_await on_refusal(delivery, claim, *result, heartbeat);
  }
  LocalHolds::Hold hold =
      local_holds_.hold(claim.key, claim.token, std::string(delivery.payload_hash));
  claim.first_attempt = result->record.first_attempt_at;
  if (claim.first_attempt) {
    auto settled =
        co_await before_debit(claim, result->record.earlier_effect_possible(), permits, hold);
    if (settled) co_return std::move(*settled);
  }
  Disposition disposition = co_await run_effect(delivery, claim, heartbeat, permits, hold);
  effect_durations_.record(clock_.now() - claimed_at);
  co_return disposition;
}

std::optional<Disposition> ChargeRecoveryService::admit(Permits& permits) {
  if (circuits_ == nullptr) return std::nullopt;
  CircuitBreaker& store = circuits_->circuit(Dependency::Store);
  permits.store = store.try_acquire();
  if (permits.store.admission == Admission::Rejected) return parked(Dependency::Store);
  if (auto left = circuits_->deferred(Dependency::Debit)) {
    // The bank's Retry-After: not before it, whatever the circuit says.
    abandon(permits.store, Dependency::Store);
    return RetryLater{*left, "debit_unavailable"};
  }
  permits.debit = circuits_->circuit(Dependency::Debit).try_acquire();
  if (permits.debit.admission == Admission::Rejected) {
    abandon(permits.store, Dependency::Store);
    return parked(Dependency::Debit);
  }
  if (permits.store.admission == Admission::Probe || permits.debit.admission == Admission::Probe) {
    circuits_->probe_started();
  }
  return std::nullopt;
}

Task<idempotency::ClaimReply> ChargeRecoveryService::claim_once(const Delivery& delivery,
                                                                const Claim& claim, Instant at) {
  const idempotency::ClaimRequest request{.key = claim.key,
                                          .payload_hash = std::string(delivery.payload_hash),
                                          .token = claim.token,
                                          .owner = config_.owner,
                                          .now = at,
                                          .lease = config_.lease};
  const Instant started = clock_.now();
  idempotency::ClaimReply reply = co_await store_.claim(request);
  claim.steps.claim_time += clock_.now() - started;
  co_return reply;
}

Task<std::expected<idempotency::ClaimResult, Disposition>> ChargeRecoveryService::hold_store_probe(
    const Delivery& delivery, const Claim& claim, Permits& permits,
    consumer::LeaseHeartbeat& heartbeat) {
  CircuitBreaker& store = circuits_->circuit(Dependency::Store);
  heartbeat.start(no_claim, config_.lease);
  std::optional<std::expected<idempotency::ClaimResult, Disposition>> outcome;
  while (!outcome) {
    // The probe failed: the circuit reopened with this task keeping the turn.
    const bool waited = co_await circuits_->waiter().wait_until(store.snapshot().next_probe_at);
    if (!waited) {
      store.release_reservation();
      abandon(permits.debit, Dependency::Debit);
      outcome = std::unexpected(parked(Dependency::Store));
      break;
    }
    permits.store = store.try_acquire_reserved();
    if (permits.store.admission == Admission::Rejected) continue;
    auto result = co_await claim_once(delivery, claim, clock_.now());
    record_store(permits.store, result);
    if (result) {
      outcome = std::move(*result);
      break;
    }
    observer_.store_failed(delivery.charge, StoreOperation::Claim, result.error());
    if (!result.error().retryable() || permits.store.admission != Admission::Probe) {
      abandon(permits.debit, Dependency::Debit);
      outcome = std::unexpected(
          RetryLater{transient_backoff(delivery.receive_count), "store_unavailable"});
    }
  }
  co_await heartbeat.stop();
  co_return std::move(*outcome);
}

void ChargeRecoveryService::record_store(const CircuitPermit& permit,
                                         const idempotency::ClaimReply& result) {
  if (circuits_ == nullptr) return;
  const CallOutcome outcome = result ? CallOutcome::Success : store_outcome(result.error());
  // A failed probe keeps its turn: this task retries the same message at the next probe.
  circuits_->circuit(Dependency::Store).record(permit, outcome, /*keep_probe=*/true);
}

void ChargeRecoveryService::observe_store(const Error* error) {
  if (circuits_ == nullptr) return;
  circuits_->circuit(Dependency::Store)
      .observe(error == nullptr ? CallOutcome::Success : store_outcome(*error));
}

void ChargeRecoveryService::abandon(const CircuitPermit& permit, Dependency dependency) {
  if (circuits_ != nullptr) circuits_->circuit(dependency).abandon(permit);
}

Disposition ChargeRecoveryService::parked(Dependency dependency) const {
  return RetryLater{circuits_->park_delay(dependency), "circuit_open"};
}

Task<Disposition> ChargeRecoveryService::on_refusal(const Delivery& delivery, const Claim& claim,
                                                    const idempotency::ClaimResult& result,
                                                    consumer::LeaseHeartbeat& heartbeat) {
  const idempotency::ClaimRecord& record = result.record;
  switch (result.outcome) {
    case ClaimOutcome::DuplicateDone:
      co_return Ack{};
    case ClaimOutcome::DuplicateInProgress:
      // Its holder is a task of this process that started, or finished, since this copy looked.
      if (local_holds_.known_here(claim.key, record.claim_token)) {
        auto settled = co_await settle_locally(delivery, claim, record.claim_token, heartbeat);
        if (settled) co_return std::move(*settled);
      }
      co_return RetryLater{recheck_delay({.now = clock_.now(),
                                          .lease_until = record.lease_until,
                                          .lease = config_.lease,
                                          .typical_effect = effect_durations_.p90()}),
                           "in_progress"};
    case ClaimOutcome::DuplicateFailed:
      co_return dead_letter(domain::dlq_reason::kPreviouslyFailed,
                            "charge already failed permanently: " + record.failure_reason,
                            delivery.charge);
    case ClaimOutcome::PayloadMismatch:
      co_return dead_letter(domain::dlq_reason::kPayloadMismatch,
                            "payload differs from the one recorded for this chargeId (recorded " +
                                record.payload_hash + ", received " +
                                std::string(delivery.payload_hash) + ")",
                            delivery.charge);
    case ClaimOutcome::Acquired:
      break;
  }
  std::unreachable();  // Acquired never reaches here, and the switch covers every outcome
}

Task<std::optional<Disposition>> ChargeRecoveryService::settle_locally(
    const Delivery& delivery, const Claim& claim, std::string holder,
    consumer::LeaseHeartbeat& heartbeat) {
  const Instant started = clock_.now();
  // The copy's own visibility is kept while it waits; it holds no claim.
  heartbeat.start(no_claim, config_.lease);
  // As long as the holder holds: its end is bounded by its own calls' timeouts, and each
  // delivery handed back to wait again would cost a receive count.
  const LocalAwait seen = co_await local_holds_.await(claim.key, std::move(holder), Instant::max());
  co_await heartbeat.stop();
  switch (seen.state) {
    case LocalHoldState::NotHeldHere:
      co_return std::nullopt;
    case LocalHoldState::StillHeld:  // the process is stopping: back soon, to whoever is left
    case LocalHoldState::Released:
      // The claim is free again: back soon, to claim it (the holder's own backoff spares the
      // dependency that failed it a second call at once).
      co_return RetryLater{kMinRecheck, "in_progress"};
    case LocalHoldState::Final:
      break;
  }
  claim.steps.local_wait = clock_.now() - started;
  observer_.copy_settled_locally(delivery.charge, claim.steps.local_wait);
  if (!seen.final.failed) co_return Ack{};
  co_return dead_letter(domain::dlq_reason::kPreviouslyFailed,
                        "charge already failed permanently: " + seen.final.failure_reason,
                        delivery.charge);
}

Task<Disposition> ChargeRecoveryService::run_effect(const Delivery& delivery, const Claim& claim,
                                                    consumer::LeaseHeartbeat& heartbeat,
                                                    Permits& permits, LocalHolds::Hold& hold) {
  // The heartbeat owns copies of the claim: an exception out of the effect unwinds this frame
  // and the delivery's before the container awaits stop(), while an extension may be in flight.
  heartbeat.start(
      [this, charge = claim.charge, key = claim.key, token = claim.token] {
        return extend_claim(store_, observer_, charge, key, token, clock_.now() + config_.lease);
      },
      config_.lease);

  bool stopped = false;
  const domain::DebitResult debit = co_await debit_through_circuit(claim, permits, stopped);
  if (stopped) {
    // Asked to stop while holding the probe's message: back with the probe schedule.
    co_await heartbeat.stop();
    (void)co_await give_back(delivery, claim, debit, "debit_unavailable");
    co_return parked(Dependency::Debit);
  }
  if (const auto* debited = std::get_if<Debited>(&debit)) {
    // Notify while the lease is still kept alive; stop just before recording, so no extension
    // races the final write.
    const NotificationResult notified = co_await notify(claim, *debited);
    co_await heartbeat.stop();
    co_return co_await record_debit(claim, *debited, notified, hold);
  }
  co_await heartbeat.stop();
  if (const auto* rejected = std::get_if<DebitRejected>(&debit)) {
    co_return co_await record_rejection(claim, *rejected, hold);
  }
  // Never recorded FAILED when misconfigured: retried like an unavailable bank until the queue
  // dead-letters it and an operator redrives it after the fix.
  const bool misconfigured = std::holds_alternative<DebitMisconfigured>(debit);
  co_return co_await give_back(delivery, claim, debit,
                               misconfigured ? "debit_misconfigured" : "debit_unavailable");
}

Task<domain::DebitResult> ChargeRecoveryService::debit_through_circuit(const Claim& claim,
                                                                       Permits& permits,
                                                                       bool& stopped) {
  if (circuits_ != nullptr) {
    // Another task's reply may have asked for a pause since this one was admitted.
    if (auto left = circuits_->deferred(Dependency::Debit)) {
      circuits_->circuit(Dependency::Debit).abandon(permits.debit);
      domain::DebitResult deferred = DebitUnavailable{
          .detail = "not sent: the bank's Retry-After has not passed", .retry_after = *left};
      claim.steps.debit = deferred;
      observer_.debit_finished(claim.charge, deferred);  // the claim is released after it
      co_return deferred;
    }
  }
  while (true) {
    const Instant started = clock_.now();
    domain::DebitResult debit = co_await bank_.debit(claim.charge, claim.charge.id.value());
    claim.steps.debit_time += clock_.now() - started;
    claim.steps.debit = debit;
    observer_.debit_finished(claim.charge, debit);
    if (circuits_ == nullptr) co_return debit;
    if (const auto retry_after = retry_after_of(debit)) {
      circuits_->defer(Dependency::Debit, *retry_after);
    }
    CircuitBreaker& circuit = circuits_->circuit(Dependency::Debit);
    const bool probe = permits.debit.admission == Admission::Probe;
    const CallOutcome outcome = debit_outcome(debit);
    circuit.record(permits.debit, outcome, /*keep_probe=*/probe);
    if (!probe || outcome != CallOutcome::Failure) co_return debit;
    // The probe failed: hold the message (its claim and visibility kept alive by the running
    // heartbeat, so its receive count does not grow) and try it again at the next probe.
    while (true) {
      const Millis deferred = circuits_->deferred(Dependency::Debit).value_or(Millis{0});
      const Instant next = std::max(circuit.snapshot().next_probe_at, clock_.now() + deferred);
      const bool waited = co_await circuits_->waiter().wait_until(next);
      // Past the bank's window the held message goes back too: its next claim decides it.
      if (!waited || (claim.first_attempt &&
                      past_window(config_.horizon, *claim.first_attempt, clock_.now()))) {
        circuit.release_reservation();
        stopped = true;
        co_return debit;
      }
      permits.debit = circuit.try_acquire_reserved();
      if (permits.debit.admission != Admission::Rejected) break;
    }
  }
}

Task<NotificationResult> ChargeRecoveryService::notify(const Claim& claim, const Debited& debited) {
  CircuitPermit permit{.admission = Admission::Allowed};
  if (circuits_ != nullptr) {
    // An open circuit (or the service's Retry-After) fails fast: the debit is recorded
    // DEBITED_NOTIFICATION_FAILED and renotify sends it later, so debits never wait on it.
    std::optional<std::string> skipped;
    if (circuits_->deferred(Dependency::Notify)) {
      skipped = "notification deferred by the service's Retry-After; not attempted";
    } else {
      permit = circuits_->circuit(Dependency::Notify).try_acquire();
      if (permit.admission == Admission::Rejected) skipped = "notify circuit open; not attempted";
    }
    if (skipped) {
      NotificationResult notified = domain::NotificationFailed{.detail = std::move(*skipped)};
      observer_.notification_finished(claim.charge, notified);
      co_return notified;
    }
  }
  const std::string key = claim.charge.id.value() + ":notify";
  const Instant started = clock_.now();
  NotificationResult notified = co_await notifier_.notify(claim.charge, debited.debit_ref, key);
  claim.steps.notify_time = clock_.now() - started;
  observer_.notification_finished(claim.charge, notified);
  if (circuits_ != nullptr) {
    CallOutcome outcome = CallOutcome::Success;
    if (const auto* failed = std::get_if<domain::NotificationFailed>(&notified)) {
      if (failed->transient) outcome = CallOutcome::Failure;
      if (failed->retry_after) circuits_->defer(Dependency::Notify, *failed->retry_after);
    }
    circuits_->circuit(Dependency::Notify).record(permit, outcome);
  }
  co_return notified;
}

Task<Disposition> ChargeRecoveryService::record_debit(const Claim& claim, const Debited& debited,
                                                      const NotificationResult& notified,
                                                      LocalHolds::Hold& hold) {
  const domain::ChargeStatus status = std::holds_alternative<NotificationSent>(notified)
                                          ? domain::ChargeStatus::Debited
                                          : domain::ChargeStatus::DebitedNotificationFailed;
  const idempotency::Completion completion{.status = std::string(to_string(status)),
                                           .result_ref = debited.debit_ref,
                                           .payload = domain::canonical_form(claim.charge)};
  const Instant started = clock_.now();
  auto written = co_await store_.complete(claim.key, claim.token, completion, started);
  claim.steps.record_time = clock_.now() - started;
  if (written && *written == WriteOutcome::Written) {
    claim.steps.status = to_string(status);
    hold.finish({});
  }
  co_return after_final_write(claim, StoreOperation::Complete, written, Ack{});
}

Task<Disposition> ChargeRecoveryService::record_rejection(const Claim& claim,
                                                          const DebitRejected& rejected,
                                                          LocalHolds::Hold& hold) {
  co_return co_await record_failure(
      claim, domain::ChargeStatus::FailedPermanent, rejected.code,
      dead_letter(domain::dlq_reason::kPermanentDebitFailure,
                  "bank refused the debit: " + rejected.code, claim.charge),
      hold);
}

Task<Disposition> ChargeRecoveryService::record_failure(const Claim& claim,
                                                        domain::ChargeStatus status,
                                                        std::string reason, DeadLetter dead_letter,
                                                        LocalHolds::Hold& hold) {
  const idempotency::Failure failure{.status = std::string(to_string(status)),
                                     .reason = std::move(reason),
                                     .payload = domain::canonical_form(claim.charge)};
  const Instant started = clock_.now();
  auto written = co_await store_.fail(claim.key, claim.token, failure, started);
  claim.steps.record_time = clock_.now() - started;
  if (written && *written == WriteOutcome::Written) {
    claim.steps.status = to_string(status);
    hold.finish({.failed = true, .failure_reason = failure.reason});
  }
  co_return after_final_write(claim, StoreOperation::Fail, written, std::move(dead_letter));
}

Task<std::optional<Disposition>> ChargeRecoveryService::before_debit(const Claim& claim,
                                                                     bool earlier_attempt,
                                                                     Permits& permits,
                                                                     LocalHolds::Hold& hold) {
  const Instant first_attempt = *claim.first_attempt;
  if (earlier_attempt && config_.horizon.inquiry != nullptr) {
    const domain::InquiryResult asked =
        co_await config_.horizon.inquiry->find_debit(claim.charge.id.value());
    observer_.debit_inquired(claim.charge, asked);
    if (const auto* found = std::get_if<domain::DebitFound>(&asked)) {
      // The earlier attempt debited: record it as the replay a POST would have been answered
      // with, without sending one.
      abandon(permits.debit, Dependency::Debit);
      const Debited debited{.debit_ref = found->debit_ref, .replayed = true};
      const NotificationResult notified = co_await notify(claim, debited);
      co_return co_await record_debit(claim, debited, notified, hold);
    }
  }
  // Not found (or not asked, or no answer): a POST is safe only while the bank remembers the key,
  // also for the first claim's (another claim may have debited while it stalled, model/claim.pml
  // HORIZON).
  if (!past_window(config_.horizon, first_attempt, clock_.now())) co_return std::nullopt;
  abandon(permits.debit, Dependency::Debit);
  co_return co_await record_uncertain(claim, first_attempt, hold);
}

Task<Disposition> ChargeRecoveryService::record_uncertain(const Claim& claim, Instant first_attempt,
                                                          LocalHolds::Hold& hold) {
  observer_.debit_uncertain(claim.charge, first_attempt);
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(clock_.now() - first_attempt);
  co_return co_await record_failure(
      claim, domain::ChargeStatus::DebitUncertain,
      std::string(to_string(domain::ChargeStatus::DebitUncertain)),
      dead_letter(domain::dlq_reason::kDebitUncertain,
                  fmt::format("an attempt {} s ago may have debited and the bank's idempotency "
                              "window has passed; not sent again (resolve with reconcile)",
                              age.count()),
                  claim.charge),
      hold);
}

Task<Disposition> ChargeRecoveryService::give_back(const Delivery& delivery, const Claim& claim,
                                                   const domain::DebitResult& debit,
                                                   std::string_view reason) {
  // Releasing lets the redelivery reclaim at once; the bank dedupes the repeated debit.
  const Instant started = clock_.now();
  auto released = co_await store_.release(claim.key, claim.token);
  claim.steps.record_time = clock_.now() - started;
  if (!released) {
    observer_.store_failed(claim.charge, StoreOperation::Release, released.error());
    observe_store(&released.error());
  } else {
    observe_store(nullptr);
    if (*released == WriteOutcome::Fenced) {
      observer_.fenced(claim.charge, StoreOperation::Release, claim.token);
    }
  }
  Millis after = transient_backoff(delivery.receive_count);
  // Never back before the bank said it would take calls again, nor (once the circuit opened)
  // before the next probe could have changed anything.
  if (auto retry_after = retry_after_of(debit)) after = std::max(after, *retry_after);
  if (circuits_ != nullptr) {
    if (auto left = circuits_->deferred(Dependency::Debit)) after = std::max(after, *left);
    if (circuits_->circuit(Dependency::Debit).state() != CircuitState::Closed) {
      after = std::max(after, circuits_->park_delay(Dependency::Debit));
    }
  }
  co_return RetryLater{after, std::string(reason)};
}

Disposition ChargeRecoveryService::after_final_write(const Claim& claim, StoreOperation operation,
                                                     const idempotency::WriteReply& written,
                                                     Disposition on_written) {
  observe_store(written ? nullptr : &written.error());
  if (!written) {
    // Our claim is still recorded as ours; a redelivery reclaims it once the lease ends and the
    // bank answers the repeated debit from its idempotency record.
    observer_.store_failed(claim.charge, operation, written.error());
    return RetryLater{config_.lease, "store_unavailable"};
  }
  if (*written == WriteOutcome::Fenced) {
    observer_.fenced(claim.charge, operation, claim.token);
    return RetryLater{config_.fenced_retry, "fenced"};
  }
  observer_.recorded(claim.charge, operation, claim.token);
  return on_written;
}

}  // namespace ic::application
