#include "application/charge_recovery_service.hpp"

#include <utility>

#include "core/backoff.hpp"
#include "core/overloaded.hpp"
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

// Stops the heartbeat on every path out of the effect, before the final write.
class HeartbeatScope {
 public:
  explicit HeartbeatScope(consumer::LeaseHeartbeat& heartbeat) : heartbeat_(heartbeat) {}
  HeartbeatScope(const HeartbeatScope&) = delete;
  HeartbeatScope& operator=(const HeartbeatScope&) = delete;
  ~HeartbeatScope() { stop(); }
  void stop() {
    if (std::exchange(running_, false)) heartbeat_.stop();
  }

 private:
  consumer::LeaseHeartbeat& heartbeat_;
  bool running_ = true;
};

DeadLetter dead_letter(std::string_view reason, std::string detail, const Charge& charge) {
  return DeadLetter{std::string(reason), std::move(detail), charge.id.value()};
}

}  // namespace

ChargeRecoveryService::ChargeRecoveryService(idempotency::IdempotencyStore& store,
                                             domain::AccountDebitPort& bank,
                                             domain::NotificationPort& notifier, const Clock& clock,
                                             domain::TokenSource& tokens, ChargeObserver& observer,
                                             ServiceConfig config)
    : store_(store),
      bank_(bank),
      notifier_(notifier),
      clock_(clock),
      tokens_(tokens),
      observer_(observer),
      config_(std::move(config)) {}

Millis ChargeRecoveryService::transient_backoff(int receive_count) const {
  return backoff_delay(receive_count - 1, config_.retry_base, config_.retry_cap, Jitter::None);
}

Disposition ChargeRecoveryService::handle(const Delivery& delivery,
                                          consumer::LeaseHeartbeat& heartbeat) {
  const Claim claim{delivery.charge, config_.key_prefix + delivery.charge.id.value(),
                    tokens_.next()};
  const Instant claimed_at = clock_.now();
  auto result = store_.claim({.key = claim.key,
                              .payload_hash = std::string(delivery.payload_hash),
                              .token = claim.token,
                              .owner = config_.owner,
                              .now = claimed_at,
                              .lease = config_.lease});
  if (!result) {
    observer_.store_failed(delivery.charge, StoreOperation::Claim, result.error());
    return RetryLater{transient_backoff(delivery.receive_count), "store_unavailable"};
  }
  observer_.claim_decided(delivery.charge, *result);
  if (result->outcome != ClaimOutcome::Acquired) return on_refusal(delivery, *result);
  Disposition disposition = run_effect(delivery, claim, heartbeat);
  effect_durations_.record(clock_.now() - claimed_at);
  return disposition;
}

Disposition ChargeRecoveryService::on_refusal(const Delivery& delivery,
                                              const idempotency::ClaimResult& result) const {
  const idempotency::ClaimRecord& record = result.record;
  switch (result.outcome) {
    case ClaimOutcome::DuplicateDone:
      return Ack{};
    case ClaimOutcome::DuplicateInProgress:
      return RetryLater{recheck_delay({.now = clock_.now(),
                                       .lease_until = record.lease_until,
                                       .lease = config_.lease,
                                       .receive_count = delivery.receive_count,
                                       .typical_effect = effect_durations_.p90()}),
                        "in_progress"};
    case ClaimOutcome::DuplicateFailed:
      return dead_letter(domain::dlq_reason::kPreviouslyFailed,
                         "charge already failed permanently: " + record.failure_reason,
                         delivery.charge);
    case ClaimOutcome::PayloadMismatch:
      return dead_letter(domain::dlq_reason::kPayloadMismatch,
                         "payload differs from the one recorded for this chargeId (recorded " +
                             record.payload_hash + ", received " +
                             std::string(delivery.payload_hash) + ")",
                         delivery.charge);
    case ClaimOutcome::Acquired:
      break;
  }
  std::unreachable();  // Acquired never reaches here, and the switch covers every outcome
}

Disposition ChargeRecoveryService::run_effect(const Delivery& delivery, const Claim& claim,
                                              consumer::LeaseHeartbeat& heartbeat) {
  heartbeat.start(
      [this, &claim] {
        auto extended = store_.extend(claim.key, claim.token, clock_.now() + config_.lease);
        if (!extended) {
          observer_.store_failed(claim.charge, StoreOperation::Extend, extended.error());
          return consumer::ClaimExtension::Unanswered;
        }
        return *extended == WriteOutcome::Written ? consumer::ClaimExtension::Extended
                                                  : consumer::ClaimExtension::Lost;
      },
      config_.lease);
  HeartbeatScope heartbeat_scope(heartbeat);

  const domain::DebitResult debit = bank_.debit(claim.charge, claim.charge.id.value());
  observer_.debit_finished(claim.charge, debit);
  return std::visit(Overloaded{
                        [&](const Debited& debited) {
                          // Notify while the lease is still kept alive; stop just before
                          // recording, so no extension races the final write.
                          const NotificationResult notified = notify(claim, debited);
                          heartbeat_scope.stop();
                          return record_debit(claim, debited, notified);
                        },
                        [&](const DebitRejected& rejected) {
                          heartbeat_scope.stop();
                          return record_rejection(claim, rejected);
                        },
                        [&](const DebitUnavailable&) {
                          heartbeat_scope.stop();
                          return give_back(delivery, claim, "debit_unavailable");
                        },
                        // Never recorded FAILED: retried like an unavailable bank until the
                        // queue dead-letters it and an operator redrives it after the fix.
                        [&](const DebitMisconfigured&) {
                          heartbeat_scope.stop();
                          return give_back(delivery, claim, "debit_misconfigured");
                        },
                    },
                    debit);
}

NotificationResult ChargeRecoveryService::notify(const Claim& claim, const Debited& debited) {
  NotificationResult notified =
      notifier_.notify(claim.charge, debited.debit_ref, claim.charge.id.value() + ":notify");
  observer_.notification_finished(claim.charge, notified);
  return notified;
}

Disposition ChargeRecoveryService::record_debit(const Claim& claim, const Debited& debited,
                                                const NotificationResult& notified) {
  const domain::ChargeStatus status = std::holds_alternative<NotificationSent>(notified)
                                          ? domain::ChargeStatus::Debited
                                          : domain::ChargeStatus::DebitedNotificationFailed;
  auto written = store_.complete(claim.key, claim.token,
                                 {.status = std::string(to_string(status)),
                                  .result_ref = debited.debit_ref,
                                  .payload = domain::canonical_form(claim.charge)},
                                 clock_.now());
  return after_final_write(claim, StoreOperation::Complete, written, Ack{});
}

Disposition ChargeRecoveryService::record_rejection(const Claim& claim,
                                                    const DebitRejected& rejected) {
  auto written =
      store_.fail(claim.key, claim.token,
                  {.status = std::string(to_string(domain::ChargeStatus::FailedPermanent)),
                   .reason = rejected.code,
                   .payload = domain::canonical_form(claim.charge)},
                  clock_.now());
  return after_final_write(claim, StoreOperation::Fail, written,
                           dead_letter(domain::dlq_reason::kPermanentDebitFailure,
                                       "bank refused the debit: " + rejected.code, claim.charge));
}

Disposition ChargeRecoveryService::give_back(const Delivery& delivery, const Claim& claim,
                                             std::string_view reason) {
  // Releasing lets the redelivery reclaim at once; the bank dedupes the repeated debit.
  auto released = store_.release(claim.key, claim.token);
  if (!released) {
    observer_.store_failed(claim.charge, StoreOperation::Release, released.error());
  } else if (*released == WriteOutcome::Fenced) {
    observer_.fenced(claim.charge, StoreOperation::Release, claim.token);
  }
  return RetryLater{transient_backoff(delivery.receive_count), std::string(reason)};
}

Disposition ChargeRecoveryService::after_final_write(
    const Claim& claim, StoreOperation operation, const std::expected<WriteOutcome, Error>& written,
    Disposition on_written) {
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
