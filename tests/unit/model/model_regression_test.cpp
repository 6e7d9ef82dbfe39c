// Each counterexample spin finds in a broken variant of model/claim.pml, replayed against our
// code: first as the exact sequence of store calls on the in-memory store, then as deliveries
// to ChargeRecoveryService. Our code must refuse the step the broken variant allowed.
// Trails: `MODEL_TRAIL_DIR=/tmp/trails model/run.sh`; how to read them: docs/model-check.md.
// Names follow the trails: workers W1, W2; m1 and m2 carry payload 1, m3 a different payload.
#include <gtest/gtest.h>

#include <string>
#include <variant>

#include "domain/charge_status.hpp"
#include "testing/dispositions.hpp"
#include "testing/service_fixture.hpp"

namespace ic::testing {
namespace {

using idempotency::ClaimOutcome;
using idempotency::ClaimState;
using idempotency::WriteOutcome;

class ModelRegression : public ServiceFixture {
 protected:
  const std::string key = charge.id.value();
  // m3: same chargeId, different body (a producer bug or a reused id).
  const domain::Charge other_body = make_charge(charge.id.value(), 9'999);

  ClaimOutcome claim_as(const std::string& token, const std::string& hash = "hash-1") {
    return event::run_blocking(memory.claim({.key = key,
                                             .payload_hash = hash,
                                             .token = token,
                                             .owner = token,
                                             .now = clock.now(),
                                             .lease = kLease}))
        .value()
        .outcome;
  }
  WriteOutcome complete_as(const std::string& token) {
    return event::run_blocking(memory.complete(key, token,
                                               {.status = "DEBITED", .result_ref = "DBT-1"},
                                               clock.now()))
        .value();
  }
};

// broken:no_token_fence (complete conditioned on state = IN_PROGRESS only). Trail:
//   W2 claims m1; the lease runs out; W2 debits; W1 receives m1 again and claims;
//   W2 completes -> the broken store writes DONE for a worker that no longer holds the claim.
TEST_F(ModelRegression, TokenFenceTrailStoreFencesTheExpiredHolder) {
  ASSERT_EQ(claim_as("W2"), ClaimOutcome::Acquired);
  clock.advance(kLease + 1ms);
  ASSERT_EQ(claim_as("W1"), ClaimOutcome::Acquired);

  EXPECT_EQ(complete_as("W2"), WriteOutcome::Fenced);
  EXPECT_EQ(record().state, ClaimState::InProgress);
  EXPECT_EQ(record().claim_token, "W1");
  EXPECT_EQ(complete_as("W1"), WriteOutcome::Written);
}

TEST_F(ModelRegression, TokenFenceTrailServiceDoesNotAckAFencedCompletion) {
  bool w1_ran = false;
  consumer::Disposition w1;
  bank.before_debit = [&](const domain::Charge&) {
    if (bank.calls() == 0) clock.advance(kLease + 1ms);  // W2 is slow: its lease runs out
  };
  store.before = [&](idempotency::StoreOperation operation) {
    if (operation != idempotency::StoreOperation::Complete || std::exchange(w1_ran, true)) return;
    // W1 receives m1 again and claims; it is still busy (its own complete does not land yet)
    // when W2's complete arrives.
    store.inject(idempotency::StoreOperation::Complete,
                 FaultInjectingStore::Fault::FailBeforeWrite);
    w1 = deliver_elsewhere(charge);
  };

  const consumer::Disposition w2 = deliver(charge);

  EXPECT_TRUE(is_retry(w2, "fenced")) << "W2 no longer holds the claim: no DONE, no ack";
  EXPECT_TRUE(is_retry(w1, "store_unavailable"));
  EXPECT_EQ(record().state, ClaimState::InProgress);
  EXPECT_EQ(observer.fenced_count, 1);
  // m1 comes back after W1's lease; the reclaim records DONE and the bank replays the debit.
  clock.advance(kLease + 1ms);
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(record().state, ClaimState::Done);
  EXPECT_EQ(bank.money_movements(), 1u);
}

// broken:no_lease_arm (claim without "leaseUntil < :now"). Trail (liveness):
//   W2 claims m1, extends, debits and crashes; from then on every delivery of m1 and m2 is
//   DUPLICATE_IN_PROGRESS forever and the key never becomes final.
TEST_F(ModelRegression, LeaseArmTrailStoreLetsARedeliveryReclaimAfterACrash) {
  ASSERT_EQ(claim_as("W2"), ClaimOutcome::Acquired);
  ASSERT_EQ(event::run_blocking(memory.extend(key, "W2", clock.now() + kLease)).value(),
            WriteOutcome::Written);
  // W2 crashes here.
  EXPECT_EQ(claim_as("W1"), ClaimOutcome::DuplicateInProgress);
  clock.advance(kLease + 1ms);
  EXPECT_EQ(claim_as("W1"), ClaimOutcome::Acquired);
  EXPECT_EQ(complete_as("W1"), WriteOutcome::Written);
}

TEST_F(ModelRegression, LeaseArmTrailServiceFinishesTheKeyAfterTheHolderDied) {
  // W2 claims and debits, then dies: its complete never lands.
  store.inject(idempotency::StoreOperation::Complete, FaultInjectingStore::Fault::FailBeforeWrite);
  ASSERT_TRUE(is_retry(deliver(charge), "store_unavailable"));

  EXPECT_TRUE(is_retry(deliver(charge), "in_progress")) << "m1 while the lease is live";
  EXPECT_TRUE(is_retry(deliver(charge), "in_progress")) << "m2, the producer duplicate";
  EXPECT_TRUE(is_dead_letter(deliver(other_body, "hash-2"), domain::dlq_reason::kPayloadMismatch));

  clock.advance(kLease + 1ms);
  EXPECT_TRUE(is_ack(deliver(charge))) << "m1 reclaims the abandoned key";
  EXPECT_TRUE(is_ack(deliver(charge))) << "m2 finds DONE";
  EXPECT_EQ(record().state, ClaimState::Done);
  EXPECT_EQ(bank.calls_for(key), 2);
  EXPECT_EQ(bank.money_movements(), 1u);
}

// broken:no_payload_check (claim without "payloadHash = :h"). Trail:
//   W2 claims m1; the debit fails with 5xx; W2 releases; W2 receives m3 (other payload) and
//   the broken store lets it claim, so the other body is debited.
TEST_F(ModelRegression, PayloadTrailStoreRefusesAReleasedKeyToAnotherPayload) {
  ASSERT_EQ(claim_as("W2"), ClaimOutcome::Acquired);
  ASSERT_EQ(event::run_blocking(memory.release(key, "W2")).value(), WriteOutcome::Written);

  EXPECT_EQ(claim_as("W2-m3", "hash-2"), ClaimOutcome::PayloadMismatch);
  EXPECT_EQ(record().payload_hash, "hash-1");
  EXPECT_EQ(record().claim_token, "W2");
}

TEST_F(ModelRegression, PayloadTrailServiceNeverDebitsTheOtherBody) {
  bank.script(key, {domain::DebitUnavailable{"5xx"}});
  ASSERT_TRUE(is_retry(deliver(charge), "debit_unavailable"));

  EXPECT_TRUE(is_dead_letter(deliver(other_body, "hash-2"), domain::dlq_reason::kPayloadMismatch));
  EXPECT_EQ(bank.calls(), 1) << "m3 never reached the bank";

  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(record().payload_hash, "hash-1");
  EXPECT_EQ(bank.money_movements(), 1u);
}

// broken:ack_in_progress (DUPLICATE_IN_PROGRESS acked). Trail:
//   W2 claims m1; W1 receives a copy of m1, sees DUPLICATE_IN_PROGRESS and deletes m1 although
//   the key is not final (if W2 then dies, nothing brings the charge back).
TEST_F(ModelRegression, AckTrailStoreReportsTheCopyAsInProgress) {
  ASSERT_EQ(claim_as("W2"), ClaimOutcome::Acquired);
  EXPECT_EQ(claim_as("W1"), ClaimOutcome::DuplicateInProgress);
}

TEST_F(ModelRegression, AckTrailServiceLeavesTheCopyOnTheQueue) {
  consumer::Disposition copy = consumer::Ack{};
  bool copied = false;
  bank.before_debit = [&](const domain::Charge&) {
    if (!std::exchange(copied, true)) copy = deliver_elsewhere(charge);
  };
  EXPECT_TRUE(is_ack(deliver(charge)));
  const auto* retry = std::get_if<consumer::RetryLater>(&copy);
  ASSERT_NE(retry, nullptr) << "a copy of an in-progress key must not be deleted";
  EXPECT_EQ(retry->reason, "in_progress");
  EXPECT_EQ(retry->after, kLease) << "it comes back when W2's lease ends";
}

// broken:lease_le (lease arm "leaseUntil <= :now"). Trail:
//   W2 claims m1; one tick later leaseUntil == now (still live); W1 claims: two live claims.
TEST_F(ModelRegression, LeaseBoundaryTrailStoreKeepsTheLeaseLiveAtItsLastInstant) {
  ASSERT_EQ(claim_as("W2"), ClaimOutcome::Acquired);
  clock.advance(kLease);  // leaseUntil == now
  EXPECT_EQ(claim_as("W1"), ClaimOutcome::DuplicateInProgress);
  clock.advance(1ms);  // leaseUntil < now
  EXPECT_EQ(claim_as("W1"), ClaimOutcome::Acquired);
}

TEST_F(ModelRegression, LeaseBoundaryTrailServiceRetriesACopyAtTheLastInstant) {
  consumer::Disposition copy = consumer::Ack{};
  bool copied = false;
  bank.before_debit = [&](const domain::Charge&) {
    if (std::exchange(copied, true)) return;
    clock.advance(kLease);
    copy = deliver_elsewhere(charge);
  };
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_TRUE(is_retry(copy, "in_progress"));
  EXPECT_EQ(bank.calls(), 1);
}

// broken:claim_any_state (claim without "state = IN_PROGRESS"). Trail:
//   W2 claims m1; the lease runs out; W2 debits and completes (the write lands, the response
//   is lost); W1 receives m1 again and the broken store turns DONE back into IN_PROGRESS.
TEST_F(ModelRegression, FinalStateTrailStoreNeverReopensDone) {
  ASSERT_EQ(claim_as("W2"), ClaimOutcome::Acquired);
  clock.advance(kLease + 1ms);
  ASSERT_EQ(complete_as("W2"), WriteOutcome::Written) << "no one reclaimed: W2 still holds";

  EXPECT_EQ(claim_as("W1"), ClaimOutcome::DuplicateDone);
  EXPECT_EQ(record().state, ClaimState::Done);
  EXPECT_EQ(complete_as("W2"), WriteOutcome::Written) << "W2's retry finds its own write";
}

TEST_F(ModelRegression, FinalStateTrailServiceAcksTheRedeliveryWithoutDebit) {
  bank.before_debit = [&](const domain::Charge&) { clock.advance(kLease + 1ms); };
  store.inject(idempotency::StoreOperation::Complete, FaultInjectingStore::Fault::LoseResponse);
  ASSERT_TRUE(is_retry(deliver(charge), "store_unavailable"));

  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(record().state, ClaimState::Done);
  EXPECT_EQ(record().fence, 1) << "never reclaimed";
  EXPECT_EQ(bank.calls(), 1);
}

// broken:bank_no_dedupe (a bank that ignores the idempotency key). Trail:
//   W2 claims m1; the debit is applied but times out; W2 releases; m1 comes back, W2 claims
//   and debits again -> money moves twice. Our side of the contract: every debit of the charge
//   carries the chargeId as the idempotency key, so the bank answers the retry as a replay.
TEST_F(ModelRegression, CrashWindowTrailServiceRetriesWithTheSameIdempotencyKey) {
  bool committed = false;
  bank.before_debit = [&](const domain::Charge& c) {
    if (std::exchange(committed, true)) return;
    ASSERT_TRUE(
        std::holds_alternative<domain::Debited>(event::run_blocking(bank.debit(c, c.id.value()))));
    bank.script(key, {domain::DebitUnavailable{"timeout after commit"}});
  };
  ASSERT_TRUE(is_retry(deliver(charge), "debit_unavailable"));
  EXPECT_EQ(record().lease_until, Instant{}) << "released: the redelivery reclaims at once";

  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(bank.calls_for(key), 3) << "commit, the timed-out answer, the replay: one key";
  EXPECT_EQ(bank.money_movements(), 1u);
  EXPECT_EQ(record().state, ClaimState::Done);
}

// broken:horizon_no_guard (model/claim.pml -DHORIZON: the bank forgets a key once its window
// has passed, and the consumer sends the debit again whatever the record's age). Trail:
//   W2 claims m1; the record's first attempt becomes older than the window minus the margin;
//   W2's debit is applied, then times out; W2 releases; the bank forgets the key; W2 receives m1
//   again, claims and debits -> 201 applied: money moves twice. Our code: past the window the
//   charge is never sent again; it ends DEBIT_UNCERTAIN, dead-lettered, for reconcile.
TEST_F(ModelRegression, HorizonTrailServiceNeverDebitsPastTheBanksWindow) {
  bool committed = false;
  bank.before_debit = [&](const domain::Charge& c) {
    if (std::exchange(committed, true)) return;
    ASSERT_TRUE(
        std::holds_alternative<domain::Debited>(event::run_blocking(bank.debit(c, c.id.value()))));
    bank.script(key, {domain::DebitUnavailable{"timeout after commit"}});
  };
  ASSERT_TRUE(is_retry(deliver(charge), "debit_unavailable"));
  clock.advance(std::chrono::hours(25));  // the default window is 24 h
  bank.forget(key);

  const consumer::Disposition again = deliver(charge);
  ASSERT_TRUE(std::holds_alternative<consumer::DeadLetter>(again));
  EXPECT_EQ(std::get<consumer::DeadLetter>(again).reason, domain::dlq_reason::kDebitUncertain);
  EXPECT_EQ(bank.money_movements(), 1u) << "money moved once";
  EXPECT_EQ(bank.calls_for(key), 2) << "the commit and its timed-out answer; nothing after";
  EXPECT_EQ(record().state, ClaimState::Failed);
  EXPECT_EQ(record().status, "DEBIT_UNCERTAIN");
}

}  // namespace
}  // namespace ic::testing
