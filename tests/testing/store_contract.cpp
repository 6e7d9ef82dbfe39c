// The contract cases; compiled into every store's test binary (see store_contract.hpp).
#include "testing/store_contract.hpp"

#include <gmock/gmock.h>

#include "event/run_blocking.hpp"
#include "testing/clocks.hpp"

namespace ic::idempotency {
namespace {

using namespace std::chrono_literals;
using testing::kContractRetention;
using testing::StoreContract;

using testing::t0;
constexpr Millis kLease = 10s;

ClaimRequest request(std::string token, Instant now, std::string hash = "hash-a") {
  std::string owner = "worker-" + token;
  return {.key = "CHG-1",
          .payload_hash = std::move(hash),
          .token = std::move(token),
          .owner = std::move(owner),
          .now = now,
          .lease = kLease};
}

// Each call runs to its end on this thread's loop (event::run_blocking).
ClaimResult claim_ok(IdempotencyStore& store, const ClaimRequest& r) {
  auto result = event::run_blocking(store.claim(r));
  EXPECT_TRUE(result.has_value()) << result.error().message;
  return result.value_or(ClaimResult{});
}

WriteOutcome written(Task<WriteReply> write) {
  auto result = event::run_blocking(std::move(write));
  EXPECT_TRUE(result.has_value()) << result.error().message;
  return result.value_or(WriteOutcome::Fenced);
}

ClaimRecord stored(IdempotencyStore& store, std::string_view key = "CHG-1") {
  auto record = event::run_blocking(store.get(key));
  EXPECT_TRUE(record.has_value()) << record.error().message;
  EXPECT_TRUE(record.has_value() && record->has_value()) << "no record for " << key;
  return record.has_value() && record->has_value() ? **record : ClaimRecord{};
}

std::int64_t epoch_seconds(Instant t) {
  return std::chrono::duration_cast<std::chrono::seconds>(t.time_since_epoch()).count();
}

TEST_P(StoreContract, FreshClaimIsAcquiredWithFenceOne) {
  auto result = claim_ok(*store_, request("A", t0));
  EXPECT_EQ(result.outcome, ClaimOutcome::Acquired);
  const ClaimRecord record = stored(*store_);
  EXPECT_EQ(record, result.record);
  EXPECT_EQ(record.key, "CHG-1");
  EXPECT_EQ(record.state, ClaimState::InProgress);
  EXPECT_EQ(record.lease_until, t0 + kLease);
  EXPECT_EQ(record.claim_token, "A");
  EXPECT_EQ(record.fence, 1);
  EXPECT_EQ(record.owner, "worker-A");
  EXPECT_EQ(record.payload_hash, "hash-a");
  EXPECT_EQ(record.created_at, t0);
  EXPECT_EQ(record.updated_at, t0);
  EXPECT_FALSE(record.completed_at.has_value());
  EXPECT_EQ(record.expires_at_epoch_seconds, epoch_seconds(t0 + kContractRetention));
}

TEST_P(StoreContract, ClaimWhileLeaseIsLiveIsAnInProgressDuplicate) {
  claim_ok(*store_, request("A", t0));
  auto result = claim_ok(*store_, request("B", t0 + 5s));
  EXPECT_EQ(result.outcome, ClaimOutcome::DuplicateInProgress);
  EXPECT_EQ(result.record.claim_token, "A");
  EXPECT_EQ(result.record.lease_until, t0 + kLease);
  EXPECT_EQ(stored(*store_).fence, 1);
}

TEST_P(StoreContract, LeaseIsStillLiveAtItsLastMillisecond) {
  claim_ok(*store_, request("A", t0));
  EXPECT_EQ(claim_ok(*store_, request("B", t0 + kLease)).outcome,
            ClaimOutcome::DuplicateInProgress);
}

TEST_P(StoreContract, ExpiredLeaseIsReclaimedAndTheFenceMovesOn) {
  claim_ok(*store_, request("A", t0));
  auto result = claim_ok(*store_, request("B", t0 + kLease + 1ms));
  EXPECT_EQ(result.outcome, ClaimOutcome::Acquired);
  const ClaimRecord record = stored(*store_);
  EXPECT_EQ(record.claim_token, "B");
  EXPECT_EQ(record.owner, "worker-B");
  EXPECT_EQ(record.fence, 2);
  EXPECT_EQ(record.lease_until, t0 + kLease + 1ms + kLease);
  EXPECT_EQ(record.created_at, t0);
}

TEST_P(StoreContract, DoneIsADuplicateForever) {
  claim_ok(*store_, request("A", t0));
  EXPECT_EQ(written(store_->complete("CHG-1", "A", {"DEBITED", "DBT-9"}, t0 + 2s)),
            WriteOutcome::Written);
  auto result = claim_ok(*store_, request("B", t0 + 1000 * kLease));
  EXPECT_EQ(result.outcome, ClaimOutcome::DuplicateDone);
  const ClaimRecord record = stored(*store_);
  EXPECT_EQ(record, result.record);
  EXPECT_EQ(record.state, ClaimState::Done);
  EXPECT_EQ(record.status, "DEBITED");
  EXPECT_EQ(record.result_ref, "DBT-9");
  EXPECT_EQ(record.completed_at, t0 + 2s);
  EXPECT_EQ(record.expires_at_epoch_seconds, epoch_seconds(t0 + 2s + kContractRetention));
}

TEST_P(StoreContract, FailedIsADuplicateForever) {
  claim_ok(*store_, request("A", t0));
  EXPECT_EQ(written(store_->fail("CHG-1", "A", {"FAILED_PERMANENT", "ACCOUNT_CLOSED"}, t0 + 1s)),
            WriteOutcome::Written);
  auto result = claim_ok(*store_, request("B", t0 + 1000 * kLease));
  EXPECT_EQ(result.outcome, ClaimOutcome::DuplicateFailed);
  EXPECT_EQ(result.record.state, ClaimState::Failed);
  EXPECT_EQ(result.record.status, "FAILED_PERMANENT");
  EXPECT_EQ(result.record.failure_reason, "ACCOUNT_CLOSED");
}

TEST_P(StoreContract, DifferentPayloadIsAMismatchInEveryState) {
  claim_ok(*store_, request("A", t0));
  EXPECT_EQ(claim_ok(*store_, request("B", t0 + 1s, "hash-b")).outcome,
            ClaimOutcome::PayloadMismatch);
  EXPECT_EQ(claim_ok(*store_, request("B", t0 + 2 * kLease, "hash-b")).outcome,
            ClaimOutcome::PayloadMismatch)
      << "an expired lease must not let a different payload take the key";
  EXPECT_EQ(written(store_->complete("CHG-1", "A", {"DEBITED", "DBT-1"}, t0 + 2s)),
            WriteOutcome::Written);
  EXPECT_EQ(claim_ok(*store_, request("C", t0 + 3s, "hash-b")).outcome,
            ClaimOutcome::PayloadMismatch);
  EXPECT_EQ(stored(*store_).payload_hash, "hash-a");
}

TEST_P(StoreContract, ClaimRetriedWithTheSameTokenSucceedsWhileLive) {
  claim_ok(*store_, request("A", t0));
  auto retry = claim_ok(*store_, request("A", t0 + 1s));
  EXPECT_EQ(retry.outcome, ClaimOutcome::Acquired);
  EXPECT_EQ(retry.record.claim_token, "A");
  EXPECT_EQ(retry.record.lease_until, t0 + 1s + kLease);
}

TEST_P(StoreContract, StaleHolderIsFencedEverywhere) {
  claim_ok(*store_, request("A", t0));
  ASSERT_EQ(claim_ok(*store_, request("B", t0 + kLease + 1ms)).outcome, ClaimOutcome::Acquired);
  const Instant late = t0 + kLease + 2s;
  EXPECT_EQ(written(store_->complete("CHG-1", "A", {"DEBITED", "DBT-A"}, late)),
            WriteOutcome::Fenced);
  EXPECT_EQ(written(store_->fail("CHG-1", "A", {"FAILED_PERMANENT", "X"}, late)),
            WriteOutcome::Fenced);
  EXPECT_EQ(written(store_->extend("CHG-1", "A", late + kLease)), WriteOutcome::Fenced);
  EXPECT_EQ(written(store_->release("CHG-1", "A")), WriteOutcome::Fenced);
  const ClaimRecord held = stored(*store_);
  EXPECT_EQ(held.state, ClaimState::InProgress);
  EXPECT_EQ(held.claim_token, "B");
  EXPECT_EQ(held.lease_until, t0 + kLease + 1ms + kLease);
  EXPECT_EQ(written(store_->complete("CHG-1", "B", {"DEBITED", "DBT-B"}, late)),
            WriteOutcome::Written);
  EXPECT_EQ(stored(*store_).result_ref, "DBT-B");
}

TEST_P(StoreContract, CompletionRetriedAfterALostResponseIsWritten) {
  claim_ok(*store_, request("A", t0));
  ASSERT_EQ(written(store_->complete("CHG-1", "A", {"DEBITED", "DBT-1"}, t0 + 1s)),
            WriteOutcome::Written);
  EXPECT_EQ(written(store_->complete("CHG-1", "A", {"DEBITED", "DBT-1"}, t0 + 2s)),
            WriteOutcome::Written);
  EXPECT_EQ(stored(*store_).completed_at, t0 + 1s) << "the retry must not rewrite the record";
}

TEST_P(StoreContract, FailureRetriedAfterALostResponseIsWritten) {
  claim_ok(*store_, request("A", t0));
  ASSERT_EQ(written(store_->fail("CHG-1", "A", {"FAILED_PERMANENT", "X"}, t0 + 1s)),
            WriteOutcome::Written);
  EXPECT_EQ(written(store_->fail("CHG-1", "A", {"FAILED_PERMANENT", "X"}, t0 + 2s)),
            WriteOutcome::Written);
}

TEST_P(StoreContract, FinalStateNeverChangesEvenForItsOwnToken) {
  claim_ok(*store_, request("A", t0));
  ASSERT_EQ(written(store_->complete("CHG-1", "A", {"DEBITED", "DBT-1"}, t0 + 1s)),
            WriteOutcome::Written);
  EXPECT_EQ(written(store_->fail("CHG-1", "A", {"FAILED_PERMANENT", "X"}, t0 + 2s)),
            WriteOutcome::Fenced);
  EXPECT_EQ(
      written(store_->complete("CHG-1", "A", {"DEBITED_NOTIFICATION_FAILED", "DBT-1"}, t0 + 2s)),
      WriteOutcome::Fenced);
  EXPECT_EQ(written(store_->extend("CHG-1", "A", t0 + 100s)), WriteOutcome::Fenced);
  EXPECT_EQ(written(store_->release("CHG-1", "A")), WriteOutcome::Fenced);
  const ClaimRecord record = stored(*store_);
  EXPECT_EQ(record.state, ClaimState::Done);
  EXPECT_EQ(record.status, "DEBITED");
}

TEST_P(StoreContract, ExtendKeepsALongEffectsClaim) {
  claim_ok(*store_, request("A", t0));
  EXPECT_EQ(written(store_->extend("CHG-1", "A", t0 + 9s + kLease)), WriteOutcome::Written);
  EXPECT_EQ(claim_ok(*store_, request("B", t0 + 15s)).outcome, ClaimOutcome::DuplicateInProgress);
  EXPECT_EQ(written(store_->complete("CHG-1", "A", {"DEBITED", "DBT-1"}, t0 + 16s)),
            WriteOutcome::Written);
}

TEST_P(StoreContract, ReleaseLetsTheNextDeliveryReclaimAtOnce) {
  claim_ok(*store_, request("A", t0));
  EXPECT_EQ(written(store_->release("CHG-1", "A")), WriteOutcome::Written);
  auto result = claim_ok(*store_, request("B", t0 + 1ms));
  EXPECT_EQ(result.outcome, ClaimOutcome::Acquired);
  EXPECT_EQ(result.record.fence, 2);
}

TEST_P(StoreContract, NonHolderCannotReleaseOrExtend) {
  claim_ok(*store_, request("A", t0));
  EXPECT_EQ(written(store_->release("CHG-1", "B")), WriteOutcome::Fenced);
  EXPECT_EQ(written(store_->extend("CHG-1", "B", t0 + 100s)), WriteOutcome::Fenced);
  EXPECT_EQ(stored(*store_).lease_until, t0 + kLease);
}

TEST_P(StoreContract, WritesToAnUnknownKeyAreFenced) {
  EXPECT_EQ(written(store_->complete("CHG-404", "A", {"DEBITED", "D"}, t0)), WriteOutcome::Fenced);
  EXPECT_EQ(written(store_->fail("CHG-404", "A", {"FAILED_PERMANENT", "X"}, t0)),
            WriteOutcome::Fenced);
  EXPECT_EQ(written(store_->extend("CHG-404", "A", t0)), WriteOutcome::Fenced);
  EXPECT_EQ(written(store_->release("CHG-404", "A")), WriteOutcome::Fenced);
  auto record = event::run_blocking(store_->get("CHG-404"));
  ASSERT_TRUE(record.has_value());
  EXPECT_FALSE(record->has_value()) << "a fenced write must not create the item";
}

TEST_P(StoreContract, KeysAreIndependent) {
  claim_ok(*store_, request("A", t0));
  auto other = request("B", t0);
  other.key = "CHG-2";
  EXPECT_EQ(claim_ok(*store_, other).outcome, ClaimOutcome::Acquired);
  EXPECT_EQ(stored(*store_, "CHG-2").claim_token, "B");
  EXPECT_EQ(stored(*store_, "CHG-1").claim_token, "A");
}

}  // namespace
}  // namespace ic::idempotency
