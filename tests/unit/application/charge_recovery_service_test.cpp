// The service against docs/design.md §3's outcome table, one behaviour per test.
#include "application/charge_recovery_service.hpp"

#include <gmock/gmock.h>

#include "domain/charge_status.hpp"
#include "testing/service_fixture.hpp"

namespace ic::testing {
namespace {

using ::testing::HasSubstr;

TEST_F(ServiceFixture, FirstDeliveryDebitsNotifiesRecordsDoneAndAcks) {
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(bank.calls_for("CHG-20261130-000123"), 1);
  EXPECT_THAT(notifier.keys(), ::testing::ElementsAre("CHG-20261130-000123:notify"));
  const idempotency::ClaimRecord r = record();
  EXPECT_EQ(r.state, idempotency::ClaimState::Done);
  EXPECT_EQ(r.status, "DEBITED");
  EXPECT_EQ(r.result_ref, "DBT-CHG-20261130-000123");
  EXPECT_EQ(r.owner, "test-worker");
}

// What the one `charge handled` line of each delivery reports (app/telemetry).
TEST_F(ServiceFixture, EachDeliveryEndsWithOneSummaryOfItsStepsAndTheirTimes) {
  bank.before_debit = [this](const domain::Charge&) { clock.advance(250ms); };
  EXPECT_TRUE(is_ack(deliver(charge)));
  auto finished = observer.finished();
  ASSERT_EQ(finished.size(), 1u);
  EXPECT_EQ(finished[0].claim, idempotency::ClaimOutcome::Acquired);
  EXPECT_EQ(finished[0].fence, 1);
  EXPECT_EQ(finished[0].status, "DEBITED");
  ASSERT_TRUE(finished[0].debit.has_value());
  EXPECT_TRUE(std::holds_alternative<domain::Debited>(*finished[0].debit));
  EXPECT_EQ(finished[0].debit_time, 250ms);
  EXPECT_EQ(finished[0].claim_time, 0ms);
  EXPECT_EQ(finished[0].notify_time, 0ms);

  EXPECT_TRUE(is_ack(deliver(charge)));  // a duplicate: refused at the claim, nothing else ran
  finished = observer.finished();
  ASSERT_EQ(finished.size(), 2u);
  EXPECT_EQ(finished[1].claim, idempotency::ClaimOutcome::DuplicateDone);
  EXPECT_FALSE(finished[1].debit.has_value());
  EXPECT_EQ(finished[1].status, "");
  EXPECT_EQ(finished[1].debit_time, 0ms);
}

TEST_F(ServiceFixture, DuplicateOfADoneChargeIsAckedWithoutDebit) {
  ASSERT_TRUE(is_ack(deliver(charge)));
  clock.advance(3 * kLease);
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_TRUE(is_ack(deliver(charge, "hash-1", 7)));
  EXPECT_EQ(bank.calls(), 1);
  EXPECT_EQ(notifier.keys().size(), 1u);
}

TEST_F(ServiceFixture, InFlightDuplicateIsNotAckedAndReturnsWhenTheLeaseEnds) {
  consumer::Disposition duplicate;
  bank.before_debit = [&](const domain::Charge&) {
    bank.before_debit = nullptr;
    clock.advance(10s);
    duplicate = deliver_elsewhere(charge);
  };
  EXPECT_TRUE(is_ack(deliver(charge)));
  const auto* retry = std::get_if<consumer::RetryLater>(&duplicate);
  ASSERT_NE(retry, nullptr);
  EXPECT_EQ(retry->after, kLease - 10s) << "come back right after the holder's lease ends";
  EXPECT_EQ(retry->reason, "in_progress");
  EXPECT_EQ(bank.calls(), 1);
}

TEST_F(ServiceFixture, CrashedClaimIsReclaimedAfterTheLeaseAndTheBankReplaysTheDebit) {
  // A worker claimed, debited and died before recording DONE.
  ASSERT_EQ(event::run_blocking(store.claim({.key = charge.id.value(),
                                             .payload_hash = "hash-1",
                                             .token = "crashed",
                                             .owner = "dead-worker",
                                             .now = clock.now(),
                                             .lease = kLease}))
                ->outcome,
            idempotency::ClaimOutcome::Acquired);
  ASSERT_TRUE(std::holds_alternative<domain::Debited>(
      event::run_blocking(bank.debit(charge, charge.id.value()))));

  EXPECT_TRUE(std::holds_alternative<consumer::RetryLater>(deliver(charge)))
      << "the dead worker's lease is still live";
  clock.advance(kLease + 1ms);
  EXPECT_TRUE(is_ack(deliver(charge)));

  EXPECT_EQ(bank.calls_for(charge.id.value()), 2) << "debit called again with the same key";
  EXPECT_EQ(bank.money_movements(), 1u) << "the bank moved money once";
  const idempotency::ClaimRecord r = record();
  EXPECT_EQ(r.state, idempotency::ClaimState::Done);
  EXPECT_EQ(r.fence, 2);
  EXPECT_EQ(r.result_ref, "DBT-CHG-20261130-000123") << "the original debitId is recorded";
}

TEST_F(ServiceFixture, PermanentBankFailureRecordsFailedAndDeadLetters) {
  bank.script(charge.id.value(), {domain::DebitRejected{"INSUFFICIENT_FUNDS"}});
  ASSERT_TRUE(std::holds_alternative<consumer::DeadLetter>(deliver(charge)));
  const consumer::Disposition d = deliver(charge);  // a redelivery of the same message
  const idempotency::ClaimRecord r = record();
  EXPECT_EQ(r.state, idempotency::ClaimState::Failed);
  EXPECT_EQ(r.status, "FAILED_PERMANENT");
  EXPECT_EQ(r.failure_reason, "INSUFFICIENT_FUNDS");
  const auto* again = std::get_if<consumer::DeadLetter>(&d);
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->reason, domain::dlq_reason::kPreviouslyFailed);
  EXPECT_THAT(again->detail, HasSubstr("INSUFFICIENT_FUNDS"));
  EXPECT_EQ(bank.calls(), 1) << "a FAILED charge is never debited again";
}

TEST_F(ServiceFixture, PermanentFailureDeadLetterNamesTheReasonAndTheCharge) {
  bank.script(charge.id.value(), {domain::DebitRejected{"ACCOUNT_CLOSED"}});
  const consumer::Disposition d = deliver(charge);
  const auto* dead = std::get_if<consumer::DeadLetter>(&d);
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(dead->reason, domain::dlq_reason::kPermanentDebitFailure);
  EXPECT_THAT(dead->detail, HasSubstr("ACCOUNT_CLOSED"));
  EXPECT_EQ(dead->key, charge.id.value());
}

TEST_F(ServiceFixture, NotificationFailureIsRecordedAndNeverRedebits) {
  notifier.fail_all();
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(record().status, "DEBITED_NOTIFICATION_FAILED");
  EXPECT_EQ(record().state, idempotency::ClaimState::Done);
  clock.advance(2 * kLease);
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(bank.calls(), 1);
}

TEST_F(ServiceFixture, StaleHolderIsFencedAndDoesNotAck) {
  consumer::Disposition second;
  bank.before_debit = [&](const domain::Charge&) {
    bank.before_debit = nullptr;         // only the first (slow) worker pauses here
    clock.advance(kLease + 1ms);         // its lease runs out mid-debit
    second = deliver_elsewhere(charge);  // the redelivery reclaims and finishes
  };
  const consumer::Disposition first = deliver(charge);

  EXPECT_TRUE(is_ack(second));
  const auto* retry = std::get_if<consumer::RetryLater>(&first);
  ASSERT_NE(retry, nullptr) << "a fenced completion must not ack";
  EXPECT_EQ(retry->reason, "fenced");
  EXPECT_EQ(observer.fenced_count, 1);
  const idempotency::ClaimRecord r = record();
  EXPECT_EQ(r.claim_token, "token-2") << "the final record is the second holder's";
  EXPECT_EQ(r.fence, 2);
  EXPECT_EQ(bank.money_movements(), 1u);
}

TEST_F(ServiceFixture, DifferentPayloadForTheSameChargeIsDeadLetteredWithoutDebit) {
  ASSERT_TRUE(is_ack(deliver(charge, "hash-1")));
  const consumer::Disposition d = deliver(make_charge("CHG-20261130-000123", 9900), "hash-2");
  const auto* dead = std::get_if<consumer::DeadLetter>(&d);
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(dead->reason, domain::dlq_reason::kPayloadMismatch);
  EXPECT_THAT(dead->detail, HasSubstr("hash-1"));
  EXPECT_EQ(bank.calls(), 1);
}

TEST_F(ServiceFixture, PayloadMismatchWhileInProgressIsDeadLetteredToo) {
  consumer::Disposition other;
  bank.before_debit = [&](const domain::Charge&) {
    bank.before_debit = nullptr;
    other = deliver_elsewhere(make_charge("CHG-20261130-000123", 1), "hash-2");
  };
  EXPECT_TRUE(is_ack(deliver(charge, "hash-1")));
  ASSERT_TRUE(std::holds_alternative<consumer::DeadLetter>(other));
  EXPECT_EQ(std::get<consumer::DeadLetter>(other).reason, domain::dlq_reason::kPayloadMismatch);
  EXPECT_EQ(bank.calls(), 1);
}

TEST_F(ServiceFixture, TransientDebitFailureReleasesAndTheNextDeliveryReclaimsAtOnce) {
  bank.script(charge.id.value(), {domain::DebitUnavailable{"503"}});
  const consumer::Disposition d = deliver(charge, "hash-1", 3);
  const auto* retry = std::get_if<consumer::RetryLater>(&d);
  ASSERT_NE(retry, nullptr);
  EXPECT_EQ(retry->reason, "debit_unavailable");
  EXPECT_EQ(retry->after, service.transient_backoff(3));
  EXPECT_EQ(record().lease_until, Instant{}) << "the claim is given back";
  EXPECT_TRUE(is_ack(deliver(charge))) << "no clock advance needed";
  EXPECT_EQ(bank.calls(), 2);
  EXPECT_EQ(bank.money_movements(), 1u);
}

// docs/design.md §5: our request or configuration is wrong, not the charge, so it is never
// recorded FAILED; it is given back and retried like an unavailable bank.
TEST_F(ServiceFixture, MisconfiguredDebitIsNeverFinalAndReleasesLikeATransientFailure) {
  bank.script(charge.id.value(), {domain::DebitMisconfigured{"bank answered HTTP 404"}});
  const consumer::Disposition d = deliver(charge, "hash-1", 3);
  const auto* retry = std::get_if<consumer::RetryLater>(&d);
  ASSERT_NE(retry, nullptr);
  EXPECT_EQ(retry->reason, "debit_misconfigured")
      << "a wrong URL path is ours to fix, not an outage";
  EXPECT_EQ(retry->after, service.transient_backoff(3));
  EXPECT_EQ(record().state, idempotency::ClaimState::InProgress) << "never recorded FAILED";
  EXPECT_EQ(record().lease_until, Instant{}) << "the claim is given back";
  EXPECT_TRUE(is_ack(deliver(charge))) << "after the fix, the next delivery debits";
  EXPECT_EQ(bank.money_movements(), 1u);
}

TEST_F(ServiceFixture, StoreUnavailableOnClaimIsANoAckWithoutEffects) {
  store.inject(idempotency::StoreOperation::Claim, FaultInjectingStore::Fault::FailBeforeWrite);
  const consumer::Disposition d = deliver(charge);
  ASSERT_TRUE(std::holds_alternative<consumer::RetryLater>(d));
  EXPECT_EQ(std::get<consumer::RetryLater>(d).reason, "store_unavailable");
  EXPECT_EQ(bank.calls(), 0);
  EXPECT_EQ(observer.store_failures, 1);
}

TEST_F(ServiceFixture, LostCompletionResponseIsANoAckAndTheRedeliveryFindsDone) {
  store.inject(idempotency::StoreOperation::Complete, FaultInjectingStore::Fault::LoseResponse);
  EXPECT_TRUE(std::holds_alternative<consumer::RetryLater>(deliver(charge)));
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(bank.calls(), 1);
}

TEST_F(ServiceFixture, CompletionFailureLeavesTheClaimForReclaimAfterTheLease) {
  store.inject(idempotency::StoreOperation::Complete, FaultInjectingStore::Fault::FailBeforeWrite);
  const consumer::Disposition d = deliver(charge);
  ASSERT_TRUE(std::holds_alternative<consumer::RetryLater>(d));
  EXPECT_EQ(std::get<consumer::RetryLater>(d).after, kLease);
  clock.advance(kLease + 1ms);
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(bank.calls(), 2);
  EXPECT_EQ(bank.money_movements(), 1u);
}

TEST_F(ServiceFixture, HeartbeatKeepsALongEffectsClaimAndStopsBeforeTheFinalWrite) {
  consumer::Disposition duplicate;
  bank.before_debit = [&](const domain::Charge&) {
    bank.before_debit = nullptr;
    clock.advance(kLease / 2);
    EXPECT_EQ(event::run_blocking(heartbeat.fire()), consumer::ClaimExtension::Extended)
        << "the holder can extend";
    clock.advance(kLease / 2 + 10s);  // past the original lease
    duplicate = deliver_elsewhere(charge);
  };
  bool running_at_final_write = true;
  store.before = [&](idempotency::StoreOperation operation) {
    if (operation == idempotency::StoreOperation::Complete)
      running_at_final_write = heartbeat.running();
  };
  EXPECT_TRUE(is_ack(deliver(charge)));
  ASSERT_TRUE(std::holds_alternative<consumer::RetryLater>(duplicate));
  EXPECT_EQ(std::get<consumer::RetryLater>(duplicate).reason, "in_progress");
  EXPECT_EQ(heartbeat.starts, 1);
  EXPECT_EQ(heartbeat.stops, 1);
  EXPECT_FALSE(running_at_final_write);
  EXPECT_EQ(bank.calls(), 1);
}

TEST_F(ServiceFixture, HeartbeatReportsLossOfTheClaim) {
  bank.before_debit = [&](const domain::Charge&) {
    bank.before_debit = nullptr;
    clock.advance(kLease + 1ms);
    ASSERT_EQ(event::run_blocking(store.claim({.key = charge.id.value(),
                                               .payload_hash = "hash-1",
                                               .token = "other",
                                               .owner = "other",
                                               .now = clock.now(),
                                               .lease = kLease}))
                  ->outcome,
              idempotency::ClaimOutcome::Acquired);
    EXPECT_EQ(event::run_blocking(heartbeat.fire()), consumer::ClaimExtension::Lost)
        << "extension must fail once fenced";
  };
  EXPECT_TRUE(std::holds_alternative<consumer::RetryLater>(deliver(charge)));
}

// A throttled or timed-out extension does not cost the claim: the holder still holds it until
// its lease ends, and the next extension succeeds.
TEST_F(ServiceFixture, AnUnansweredExtensionIsReportedAndTheNextOneExtends) {
  bank.before_debit = [&](const domain::Charge&) {
    bank.before_debit = nullptr;
    clock.advance(kLease / 2);
    store.inject(idempotency::StoreOperation::Extend, FaultInjectingStore::Fault::FailBeforeWrite);
    EXPECT_EQ(event::run_blocking(heartbeat.fire()), consumer::ClaimExtension::Unanswered);
    EXPECT_EQ(observer.store_failures.load(), 1) << "the failed extension is reported";
    clock.advance(kLease / 8);
    EXPECT_EQ(event::run_blocking(heartbeat.fire()), consumer::ClaimExtension::Extended);
    EXPECT_EQ(record().lease_until, clock.now() + kLease);
  };
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(bank.money_movements(), 1u);
}

// Holds every extension, in flight, until open().
class GatedExtensions final : public idempotency::ForwardingStore {
 public:
  GatedExtensions(idempotency::IdempotencyStore& inner, event::EventLoop& loop)
      : ForwardingStore(inner), gate_(loop) {}
  Task<idempotency::WriteReply> extend(std::string_view key, std::string_view token,
                                       Instant until) override {
    while (!open_) (void)co_await gate_.wait();
    co_return co_await ForwardingStore::extend(key, token, until);
  }
  void open() {
    open_ = true;
    gate_.notify_all();
  }

 private:
  event::WaitQueue gate_;
  bool open_ = false;
};

// The container's heartbeat at its first tick: the extension is a task of its own, started at
// once, and stop() waits for it.
class ExtendingAtOnce final : public consumer::LeaseHeartbeat {
 public:
  explicit ExtendingAtOnce(event::EventLoop& loop) : finished_(loop) {}
  void start(std::function<Task<consumer::ClaimExtension>()> extend_claim, Millis) override {
    ++running_;
    spawn(beat(std::move(extend_claim)), [this](std::exception_ptr) {
      --running_;
      finished_.notify_all();
    });
  }
  Task<void> stop() override {
    while (running_ > 0) (void)co_await finished_.wait();
  }
  std::vector<consumer::ClaimExtension> extensions;

 private:
  Task<void> beat(std::function<Task<consumer::ClaimExtension>()> extend_claim) {
    extensions.push_back(co_await extend_claim());
  }
  int running_ = 0;
  event::WaitQueue finished_;
};

// As ChargeMessageHandler does: the delivery lives in this frame, gone once handle() throws.
Task<consumer::Disposition> handle_copy(application::ChargeRecoveryService& service,
                                        domain::Charge charge, consumer::LeaseHeartbeat& beat) {
  const application::Delivery delivery{.charge = charge, .payload_hash = "hash-1"};
  co_return co_await service.handle(delivery, beat);
}

// As the container does: a handler that threw is followed by the heartbeat's stop().
Task<std::string> throw_then_stop(application::ChargeRecoveryService& service,
                                  const domain::Charge& charge, GatedExtensions& gated,
                                  consumer::LeaseHeartbeat& beat) {
  std::string failure;
  try {
    (void)co_await handle_copy(service, charge, beat);
  } catch (const std::exception& error) {
    failure = error.what();
  }
  gated.open();
  co_await beat.stop();
  co_return failure;
}

// An exception out of the effect unwinds the service's frames while an extension is in flight:
// the extension still extends this claim (under ASan, a use after free before the fix).
TEST_F(ServiceFixture, AnExtensionInFlightOutlivesAnExceptionOutOfTheEffect) {
  GatedExtensions gated(store, loop);
  application::ChargeRecoveryService throwing = make_service(gated, waiter);
  ExtendingAtOnce beat(loop);
  bank.before_debit = [](const domain::Charge&) { throw std::runtime_error("bank client bug"); };
  EXPECT_EQ(event::run_on(loop, throw_then_stop(throwing, charge, gated, beat)), "bank client bug");
  EXPECT_THAT(beat.extensions, ::testing::ElementsAre(consumer::ClaimExtension::Extended));
  EXPECT_EQ(record().claim_token, "token-1") << "the claim extended is this delivery's";
}

TEST_F(ServiceFixture, NoHeartbeatForDuplicates) {
  ASSERT_TRUE(is_ack(deliver(charge)));
  ASSERT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(heartbeat.starts, 1);
}

TEST_F(ServiceFixture, TransientBackoffGrowsWithReceiveCountUpToTheCap) {
  EXPECT_EQ(service.transient_backoff(1), 2s);
  EXPECT_EQ(service.transient_backoff(2), 4s);
  EXPECT_EQ(service.transient_backoff(4), 16s);
  EXPECT_EQ(service.transient_backoff(50), 300s);
  EXPECT_EQ(service.transient_backoff(0), 2s);
}

TEST_F(ServiceFixture, KeyPrefixIsApplied) {
  application::ChargeRecoveryService prefixed(
      store, bank, notifier, clock, tokens, observer, waiter,
      {.lease = kLease, .owner = "w", .key_prefix = "finedge#"});
  EXPECT_TRUE(is_ack(
      event::run_on(loop, prefixed.handle({.charge = charge, .payload_hash = "h"}, heartbeat))));
  EXPECT_EQ(record("finedge#CHG-20261130-000123").state, idempotency::ClaimState::Done);
  EXPECT_EQ(bank.calls_for("CHG-20261130-000123"), 1) << "the bank key is the bare chargeId";
}

}  // namespace
}  // namespace ic::testing
