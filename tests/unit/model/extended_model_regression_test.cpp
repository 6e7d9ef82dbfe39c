// Counterexamples spin finds in the extended model (model/claim.pml with -DEXT: the heartbeat,
// clock skew, re-checks of in-progress duplicates, operator reopen and redrive), replayed against
// our code as in model_regression_test.cpp: the store calls on the in-memory store, then
// deliveries to ChargeRecoveryService. Our code must refuse the step the broken variant allowed.
// Trails: `MODEL_TRAIL_DIR=/tmp/trails model/run.sh`; how to read them: docs/model-check.md.
// Names follow the trails: workers W0, W1; m1 and m2 carry payload 1, m3 a different payload.
#include <gtest/gtest.h>

#include <chrono>
#include <expected>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>

#include "domain/charge_status.hpp"
#include "testing/dispositions.hpp"
#include "testing/service_fixture.hpp"

namespace ic::testing {
namespace {

using idempotency::ClaimOutcome;
using idempotency::ClaimState;
using idempotency::WriteOutcome;

// Stand-in for the operator's `reopen` (DESIGN §7; another issue adds it, nothing in src/ yet):
// the store transition the model checks, built from the in-memory store's public API. A reopen
// that succeeds leaves the record IN_PROGRESS with an expired lease, the same payloadHash and a
// token no worker holds, so DESIGN §3's claim condition, unchanged, lets the next delivery with
// the same payload claim it. Test-only shortcuts: it reads, then replaces the whole store (the real
// command must be one conditional write), and it keeps only the reopened key.
class ReopenableStore final : public idempotency::IdempotencyStore {
 public:
  enum class Reopen {
    IfFailed,       // the contract: allowed only from FAILED
    Unconditional,  // broken:reopen_any_state
  };
  static constexpr std::string_view kOperatorToken = "operator-reopen";

  bool reopen(std::string_view key, Instant now, Reopen how = Reopen::IfFailed) {
    auto current = event::run_blocking(inner_->get(key));
    if (!current || !current->has_value()) return false;
    const idempotency::ClaimRecord record = **current;
    if (how == Reopen::IfFailed && record.state != ClaimState::Failed) return false;
    auto reopened = std::make_unique<memory::InMemoryIdempotencyStore>(kRetention);
    const auto claimed = event::run_blocking(reopened->claim({.key = record.key,
                                                              .payload_hash = record.payload_hash,
                                                              .token = std::string(kOperatorToken),
                                                              .owner = "operator",
                                                              .now = now,
                                                              .lease = Millis{1}}));
    if (!claimed || claimed->outcome != ClaimOutcome::Acquired) return false;
    const auto released = event::run_blocking(reopened->release(record.key, kOperatorToken));
    if (released.value_or(WriteOutcome::Fenced) != WriteOutcome::Written) return false;
    inner_ = std::move(reopened);
    return true;
  }

  Task<idempotency::ClaimReply> claim(const idempotency::ClaimRequest& request) override {
    return inner_->claim(request);
  }
  Task<idempotency::WriteReply> complete(std::string_view key, std::string_view token,
                                         const idempotency::Completion& completion,
                                         Instant now) override {
    return inner_->complete(key, token, completion, now);
  }
  Task<idempotency::WriteReply> fail(std::string_view key, std::string_view token,
                                     const idempotency::Failure& failure, Instant now) override {
    return inner_->fail(key, token, failure, now);
  }
  Task<idempotency::WriteReply> extend(std::string_view key, std::string_view token,
                                       Instant until) override {
    return inner_->extend(key, token, until);
  }
  Task<idempotency::WriteReply> release(std::string_view key, std::string_view token) override {
    return inner_->release(key, token);
  }
  Task<idempotency::ReadReply> get(std::string_view key) override { return inner_->get(key); }

 private:
  static constexpr std::chrono::seconds kRetention{std::chrono::hours(24 * 30)};
  std::unique_ptr<memory::InMemoryIdempotencyStore> inner_ =
      std::make_unique<memory::InMemoryIdempotencyStore>(kRetention);
};

class ExtendedModelRegression : public ServiceFixture {
 protected:
  const std::string key = charge.id.value();
  // m3: same chargeId, different body.
  const domain::Charge other_body = make_charge(charge.id.value(), 9'999);

  ClaimOutcome claim_as(const std::string& token, const Clock& at) {
    return event::run_blocking(memory.claim({.key = key,
                                             .payload_hash = "hash-1",
                                             .token = token,
                                             .owner = token,
                                             .now = at.now(),
                                             .lease = kLease}))
        .value()
        .outcome;
  }
  ClaimOutcome claim_as(const std::string& token) { return claim_as(token, clock); }
  WriteOutcome extend_as(const std::string& token, const Clock& at) {
    return event::run_blocking(memory.extend(key, token, at.now() + kLease)).value();
  }
  // Another worker's delivery (its own process: nothing it holds is waited for by this one's).
  static consumer::Disposition handle(application::ChargeRecoveryService& worker,
                                      const domain::Charge& c, std::string_view hash,
                                      consumer::LeaseHeartbeat& beat, int receive_count = 1) {
    const application::Delivery delivery{
        .charge = c, .payload_hash = hash, .receive_count = receive_count};
    return event::run_blocking(worker.handle(delivery, beat));
  }
  static idempotency::ClaimRecord record_of(ReopenableStore& reopenable, const std::string& k) {
    auto r = event::run_blocking(reopenable.get(k));
    EXPECT_TRUE(r.has_value() && r->has_value()) << "no record for " << k;
    return r.has_value() && r->has_value() ? **r : idempotency::ClaimRecord{};
  }
};

// ---- heartbeat ----

// broken:extend_no_token (the heartbeat's extend conditioned on state = IN_PROGRESS only). Trail:
//   W1 claims m1; its heartbeat is late and the lease runs out; W0 receives m1 again and claims;
//   W1's heartbeat fires -> the broken store extends the lease for W1, which then believes it
//   still holds the key next to W0 (and keeps extending its copy's visibility).
TEST_F(ExtendedModelRegression, ExtendTrailStoreFencesTheHeartbeatOfALostClaim) {
  ASSERT_EQ(claim_as("W1"), ClaimOutcome::Acquired);
  clock.advance(kLease + 1ms);
  ASSERT_EQ(claim_as("W0"), ClaimOutcome::Acquired);
  const Instant w0_lease = record().lease_until;
  clock.advance(1ms);

  EXPECT_EQ(extend_as("W1", clock), WriteOutcome::Fenced);
  EXPECT_EQ(record().claim_token, "W0");
  EXPECT_EQ(record().lease_until, w0_lease) << "W1's heartbeat must not move W0's lease";
}

TEST_F(ExtendedModelRegression, ExtendTrailServiceStopsTheHeartbeatOfADeposedHolder) {
  RecordingHeartbeat w0_heartbeat;
  consumer::Disposition w0 = consumer::RetryLater{};
  bool w1_held = true;
  Instant w0_lease{};
  int debits = 0;
  bank.before_debit = [&](const domain::Charge&) {
    switch (debits++) {
      case 0:  // W1 is slow and its heartbeat late: its lease runs out, m1 comes back to W0
        clock.advance(kLease + 1ms);
        w0 = handle(elsewhere, charge, "hash-1", w0_heartbeat);
        break;
      case 1:  // W0 holds the claim, mid-debit, when W1's heartbeat finally fires
        w0_lease = record().lease_until;
        w1_held = event::run_blocking(heartbeat.fire()) == consumer::ClaimExtension::Extended;
        EXPECT_EQ(record().lease_until, w0_lease);
        EXPECT_EQ(event::run_blocking(w0_heartbeat.fire()), consumer::ClaimExtension::Extended)
            << "W0's own heartbeat still extends";
        break;
      default:
        break;
    }
  };

  const consumer::Disposition w1 = deliver(charge);

  EXPECT_FALSE(w1_held) << "fenced: W1's heartbeat stops, its copy's visibility is not extended";
  EXPECT_TRUE(is_ack(w0));
  EXPECT_TRUE(is_retry(w1, "fenced"));
  EXPECT_EQ(record().state, ClaimState::Done);
  EXPECT_EQ(bank.money_movements(), 1u);
}

// ---- re-check of an in-progress duplicate ----

// broken:ack_recheck (a re-check that sees IN_PROGRESS again acks the copy). Trail:
//   W1 and W0 both receive m1; W0 claims; W1 gets DUPLICATE_IN_PROGRESS and hands m1 back;
//   W1 receives m1 again (the re-check, sooner than the lease end) and sees IN_PROGRESS again
//   -> the broken consumer deletes m1 although the key is not final.
TEST_F(ExtendedModelRegression, RecheckTrailStoreStillReportsInProgress) {
  ASSERT_EQ(claim_as("W0"), ClaimOutcome::Acquired);
  EXPECT_EQ(claim_as("W1"), ClaimOutcome::DuplicateInProgress);
  clock.advance(kLease / 4);  // an adaptive re-check comes back well before the lease ends
  EXPECT_EQ(claim_as("W1-recheck"), ClaimOutcome::DuplicateInProgress);
  EXPECT_EQ(record().claim_token, "W0");
}

TEST_F(ExtendedModelRegression, RecheckTrailServiceNeverAcksACopyWhileTheKeyIsInProgress) {
  consumer::Disposition first = consumer::Ack{};
  consumer::Disposition recheck = consumer::Ack{};
  bool copied = false;
  bank.before_debit = [&](const domain::Charge&) {
    if (std::exchange(copied, true)) return;
    first = deliver_elsewhere(charge, "hash-1", 1);
    clock.advance(kLease / 4);
    recheck = deliver_elsewhere(charge, "hash-1", 2);
  };

  EXPECT_TRUE(is_ack(deliver(charge)));

  EXPECT_TRUE(is_retry(first, "in_progress"));
  ASSERT_TRUE(is_retry(recheck, "in_progress")) << "a re-check that sees IN_PROGRESS must not ack";
  EXPECT_EQ(std::get<consumer::RetryLater>(recheck).after, kLease - kLease / 4)
      << "hidden at most until the holder's lease ends";
  EXPECT_EQ(bank.calls(), 1);
  EXPECT_TRUE(is_ack(deliver(charge, "hash-1", 3))) << "once DONE, the copy is acked";
}

// ---- operator reopen and redrive ----

// broken:reopen_any_state (reopen without the condition state = FAILED). Trail:
//   W1 claims m1, the debit succeeds, W1's complete lands but its answer is lost; the operator
//   reopens the key -> the broken reopen turns DONE back into a claimable key.
TEST_F(ExtendedModelRegression, ReopenTrailStoreRefusesToReopenDone) {
  ReopenableStore reopenable;
  FaultInjectingStore faults{reopenable};
  auto w1 = make_service(faults, elsewhere_waiter);
  faults.inject(idempotency::StoreOperation::Complete, FaultInjectingStore::Fault::LoseResponse);
  ASSERT_TRUE(is_retry(handle(w1, charge, "hash-1", heartbeat), "store_unavailable"));

  EXPECT_FALSE(reopenable.reopen(key, clock.now())) << "reopen is allowed only from FAILED";
  EXPECT_EQ(record_of(reopenable, key).state, ClaimState::Done);
  EXPECT_TRUE(is_ack(handle(w1, charge, "hash-1", heartbeat))) << "m1 comes back: DUPLICATE_DONE";
  EXPECT_EQ(bank.calls(), 1);
}

// The negative control: what broken:reopen_any_state does to the same history.
TEST_F(ExtendedModelRegression, ReopenTrailAnUnconditionalReopenBreaksFinality) {
  ReopenableStore reopenable;
  auto w1 = make_service(reopenable, elsewhere_waiter);
  ASSERT_TRUE(is_ack(handle(w1, charge, "hash-1", heartbeat)));

  ASSERT_TRUE(reopenable.reopen(key, clock.now(), ReopenableStore::Reopen::Unconditional));
  EXPECT_EQ(record_of(reopenable, key).state, ClaimState::InProgress) << "final_is_final violated";
  EXPECT_TRUE(is_ack(handle(w1, charge, "hash-1", heartbeat)));
  EXPECT_EQ(bank.calls(), 2) << "the redelivery debits again";
  EXPECT_EQ(bank.money_movements(), 1u) << "only the bank's dedupe keeps the money safe";
}

// The contract's reopen, racing the consumer as the model does: FAILED is final for deliveries
// until the reopen; afterwards the next delivery with the same payload claims the key, and the
// payload check still applies.
TEST_F(ExtendedModelRegression, ReopenOfFailedLetsTheNextDeliveryWithTheSamePayloadClaim) {
  ReopenableStore reopenable;
  auto worker = make_service(reopenable, elsewhere_waiter);
  bank.script(key, {domain::DebitRejected{"INSUFFICIENT_FUNDS"}});
  ASSERT_TRUE(is_dead_letter(handle(worker, charge, "hash-1", heartbeat),
                             domain::dlq_reason::kPermanentDebitFailure));
  EXPECT_TRUE(is_dead_letter(handle(worker, charge, "hash-1", heartbeat),
                             domain::dlq_reason::kPreviouslyFailed))
      << "a redrive before the reopen is dead-lettered again";

  ASSERT_TRUE(reopenable.reopen(key, clock.now()));
  EXPECT_TRUE(is_dead_letter(handle(worker, other_body, "hash-2", heartbeat),
                             domain::dlq_reason::kPayloadMismatch));
  EXPECT_TRUE(is_ack(handle(worker, charge, "hash-1", heartbeat)));
  EXPECT_EQ(record_of(reopenable, key).state, ClaimState::Done);
  EXPECT_EQ(bank.money_movements(), 1u);
  EXPECT_FALSE(reopenable.reopen(key, clock.now())) << "DONE is never reopened";
}

// witness:reopen_orphan (expected: the protocol allows it; the operator procedure covers it).
// Trail: W0 claims m3 and the bank refuses it: FAILED, m3 dead-lettered and deleted (m1 and m2,
//   other payload, were dead-lettered as PAYLOAD_MISMATCH); W1 had received a copy of m3 before
//   the delete; the operator reopens the key; W1's claim lands on the reopened key and W1 dies.
//   Every copy is in the DLQ: no delivery comes back to the IN_PROGRESS key.
// Here W1 does not even die: a transient bank failure releases the claim, and the RetryLater has
// no message to return. One more redrive of the DLQ copy finishes the charge.
TEST_F(ExtendedModelRegression, ReopenStragglerLeavesTheKeyWaitingForAnotherRedrive) {
  ReopenableStore reopenable;
  auto worker = make_service(reopenable, elsewhere_waiter);
  bank.script(key, {domain::DebitRejected{"INSUFFICIENT_FUNDS"}});
  ASSERT_TRUE(is_dead_letter(handle(worker, other_body, "hash-2", heartbeat),
                             domain::dlq_reason::kPermanentDebitFailure));

  ASSERT_TRUE(reopenable.reopen(key, clock.now()));
  bank.script(key, {domain::DebitUnavailable{"5xx"}});
  EXPECT_TRUE(is_retry(handle(worker, other_body, "hash-2", heartbeat), "debit_unavailable"))
      << "W1's copy of m3, received before the delete, claims the reopened key";
  const idempotency::ClaimRecord orphan = record_of(reopenable, key);
  EXPECT_EQ(orphan.state, ClaimState::InProgress);
  EXPECT_NE(orphan.claim_token, ReopenableStore::kOperatorToken);
  EXPECT_FALSE(orphan.lease_live(clock.now())) << "claimable, but no message is left to claim it";

  EXPECT_TRUE(is_ack(handle(worker, other_body, "hash-2", heartbeat))) << "the next redrive";
  EXPECT_EQ(record_of(reopenable, key).state, ClaimState::Done);
  EXPECT_EQ(bank.money_movements(), 1u);
}

// ---- clock skew ----
// The bound (docs/model-check.md): W0's clock runs S ahead of the holder W1's, and W1's heartbeat
// lands D after it is due (half the lease after W1's last claim or extension). W0 sees W1's lease
// end S early, so at most one live claim holds iff S + D <= lease / 2.

TEST_F(ExtendedModelRegression, SkewAtTheBoundStoreKeepsTheHeartbeatingHolder) {
  const SkewedClock w0_clock(clock, kLease / 2);
  ASSERT_EQ(claim_as("W1"), ClaimOutcome::Acquired);
  clock.advance(kLease / 2);  // W1's heartbeat is due; W0 claims just before it lands
  EXPECT_EQ(claim_as("W0", w0_clock), ClaimOutcome::DuplicateInProgress)
      << "leaseUntil == W0's now: still live";
  ASSERT_EQ(extend_as("W1", clock), WriteOutcome::Written);
  clock.advance(kLease / 2);
  EXPECT_EQ(claim_as("W0", w0_clock), ClaimOutcome::DuplicateInProgress);
  EXPECT_EQ(record().claim_token, "W1");
}

// broken:skew_beyond_bound (SKEW = lease/2 + 1 tick, heartbeats on time). Trail:
//   W1 (clock +0) claims m1; half the lease passes, W1's heartbeat is due; before it lands,
//   W0 (clock +S) receives m1 and claims: W0's now is past leaseUntil -> two live claims.
// Not a code variant: the code behaves exactly as the model, so this test pins the bound down.
TEST_F(ExtendedModelRegression, SkewBeyondTheBoundStoreLetsAFastClockOvertake) {
  const SkewedClock w0_clock(clock, kLease / 2 + 1ms);
  ASSERT_EQ(claim_as("W1"), ClaimOutcome::Acquired);
  clock.advance(kLease / 2);
  EXPECT_EQ(claim_as("W0", w0_clock), ClaimOutcome::Acquired)
      << "W1's own clock still gives it half a lease";
  EXPECT_EQ(extend_as("W1", clock), WriteOutcome::Fenced) << "W1's heartbeat stops";
}

// broken:skew_late_heartbeat (SKEW + HBLATE = lease/2 + 1 tick). Trail:
//   W1 (clock +0) claims m1; half the lease passes and W1's heartbeat is late; W0 (clock +S)
//   receives m1 and claims before the late extension lands.
TEST_F(ExtendedModelRegression, SkewPlusALateHeartbeatBeyondTheBoundStoreLetsAFastClockOvertake) {
  const SkewedClock w0_clock(clock, kLease / 4);
  ASSERT_EQ(claim_as("W1"), ClaimOutcome::Acquired);
  clock.advance(kLease / 2 + kLease / 4);  // due at lease/2, late by lease/4: still on the bound
  EXPECT_EQ(claim_as("W0", w0_clock), ClaimOutcome::DuplicateInProgress);
  clock.advance(1ms);  // one more millisecond of lateness
  EXPECT_EQ(claim_as("W0", w0_clock), ClaimOutcome::Acquired);
}

// Money safety holds for any skew (the model's ANYCLOCK runs): beyond the bound the overtaken
// holder's heartbeat and final write are fenced, and the bank answers the second debit call.
TEST_F(ExtendedModelRegression, SkewBeyondTheBoundServiceStillMovesMoneyOnce) {
  const SkewedClock w0_clock(clock, kLease / 2 + 1ms);
  auto w0_service =
      application::ChargeRecoveryService(store, bank, notifier, w0_clock, tokens, observer,
                                         elsewhere_waiter, {.lease = kLease, .owner = "W0"});
  RecordingHeartbeat w0_heartbeat;
  consumer::Disposition w0 = consumer::RetryLater{};
  bool w1_held = true;
  int debits = 0;
  bank.before_debit = [&](const domain::Charge&) {
    if (debits++ != 0) return;
    clock.advance(kLease / 2);  // W1's heartbeat is due, and W0 overtakes before it lands
    w0 = handle(w0_service, charge, "hash-1", w0_heartbeat);
    w1_held = event::run_blocking(heartbeat.fire()) == consumer::ClaimExtension::Extended;
  };

  const consumer::Disposition w1 = deliver(charge);

  EXPECT_TRUE(is_ack(w0));
  EXPECT_FALSE(w1_held);
  EXPECT_TRUE(is_retry(w1, "fenced"));
  EXPECT_EQ(record().state, ClaimState::Done);
  EXPECT_EQ(bank.calls(), 2);
  EXPECT_EQ(bank.money_movements(), 1u);
}

TEST_F(ExtendedModelRegression, SkewAtTheBoundServiceRetriesTheCopyAndKeepsTheHolder) {
  const SkewedClock w0_clock(clock, kLease / 2);
  auto w0_service =
      application::ChargeRecoveryService(store, bank, notifier, w0_clock, tokens, observer,
                                         elsewhere_waiter, {.lease = kLease, .owner = "W0"});
  RecordingHeartbeat w0_heartbeat;
  consumer::Disposition w0 = consumer::Ack{};
  bool w1_held = false;
  bool copied = false;
  bank.before_debit = [&](const domain::Charge&) {
    if (std::exchange(copied, true)) return;
    clock.advance(kLease / 2);
    w0 = handle(w0_service, charge, "hash-1", w0_heartbeat);
    w1_held = event::run_blocking(heartbeat.fire()) == consumer::ClaimExtension::Extended;
  };

  EXPECT_TRUE(is_ack(deliver(charge)));

  ASSERT_TRUE(is_retry(w0, "in_progress"));
  EXPECT_EQ(std::get<consumer::RetryLater>(w0).after, Millis{0})
      << "W0 computes the rest of W1's lease with its own clock: S early";
  EXPECT_TRUE(w1_held);
  EXPECT_EQ(bank.calls(), 1);
}

}  // namespace
}  // namespace ic::testing
