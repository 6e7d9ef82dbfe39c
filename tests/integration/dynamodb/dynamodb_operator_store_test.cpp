// The operator's writes and listings against moto over real HTTP: the sparse index gets only
// the records that need a person, reopen and amend are fenced on the record read, and a
// changed record refuses the write.
#include "adapters/dynamodb/dynamodb_operator_store.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "adapters/dynamodb/dynamodb_store.hpp"
#include "adapters/dynamodb/table_provisioner.hpp"
#include "event/run_blocking.hpp"
#include "testing/clocks.hpp"
#include "testing/moto_fixture.hpp"

namespace ic::dynamodb {
namespace {

using namespace std::chrono_literals;
using idempotency::OperatorWrite;
using testing::DynamoDbWiring;
using testing::shared_moto;

using testing::t0;
const TableSpec kSpec{.name = testing::kTable,
                      .retention = std::chrono::hours(24 * 30),
                      .result_attribute = "debitRef",
                      .attention_statuses = {"DEBITED_NOTIFICATION_FAILED"}};
const char* const kPayload = "v1|CHG-1|ACC-1|FEE|1|INR|2026-11-30";

class OperatorStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(shared_moto().reset());
    auto provisioned = provision_table(wiring_.client, kSpec.name, {});
    ASSERT_TRUE(provisioned) << provisioned.error().code;
    ASSERT_TRUE(provisioned->attention_index);
  }

  // Claims `key` and records it final as `status` (FAILED for FAILED_PERMANENT).
  void finish(const std::string& key, const std::string& status, Instant at) {
    const std::string token = "tok-" + key;
    auto claimed = event::run_blocking(store_.claim(
        {.key = key, .payload_hash = "h", .token = token, .owner = "w", .now = at, .lease = 10s}));
    ASSERT_TRUE(claimed && claimed->outcome == idempotency::ClaimOutcome::Acquired);
    auto written = event::run_blocking(
        status == "FAILED_PERMANENT"
            ? store_.fail(key, token, {.status = status, .reason = "NSF", .payload = kPayload}, at)
            : store_.complete(key, token,
                              {.status = status, .result_ref = "DBT", .payload = kPayload}, at));
    ASSERT_TRUE(written && *written == idempotency::WriteOutcome::Written);
  }

  std::vector<std::string> attention(std::string_view value, Instant since = Instant{}) {
    std::vector<std::string> keys;
    std::string cursor;
    do {
      auto page = operators_.needing_attention(value, since, cursor);
      EXPECT_TRUE(page) << page.error().code << " " << page.error().message;
      if (!page) break;
      for (const auto& r : page->records) keys.push_back(r.key);
      cursor = page->next;
    } while (!cursor.empty());
    std::ranges::sort(keys);
    return keys;
  }

  idempotency::ClaimRecord read(const std::string& key) {
    auto r = event::run_blocking(store_.get(key));
    EXPECT_TRUE(r && *r);
    return r && *r ? **r : idempotency::ClaimRecord{};
  }

  DynamoDbWiring wiring_{shared_moto().endpoint(), "AKIDTEST", "secret"};
  DynamoDbIdempotencyStore store_{wiring_.client, kSpec};
  DynamoDbOperatorStore operators_{wiring_.client, kSpec};
  const idempotency::AuditEntry audit_{
      .at = t0 + 1h, .actor = "alice@ops", .action = "reopen", .reason = "account reopened"};
};

TEST_F(OperatorStoreTest, OnlyRecordsThatNeedAPersonAreInTheIndex) {
  finish("CHG-OK", "DEBITED", t0);
  finish("CHG-NSF", "FAILED_PERMANENT", t0);
  finish("CHG-LATE", "FAILED_PERMANENT", t0 + 2h);
  finish("CHG-UNNOTIFIED", "DEBITED_NOTIFICATION_FAILED", t0);
  EXPECT_EQ(attention("FAILED"), (std::vector<std::string>{"CHG-LATE", "CHG-NSF"}));
  EXPECT_EQ(attention("FAILED", t0 + 1h), std::vector<std::string>{"CHG-LATE"});
  EXPECT_EQ(attention("DEBITED_NOTIFICATION_FAILED"), std::vector<std::string>{"CHG-UNNOTIFIED"});
  EXPECT_EQ(read("CHG-OK").payload, kPayload) << "a debit keeps its charge, for reconcile";
  EXPECT_EQ(read("CHG-NSF").payload, kPayload);
}

TEST_F(OperatorStoreTest, ReopenIsFencedOnTheRecordReadAndLeavesTheIndex) {
  finish("CHG-1", "FAILED_PERMANENT", t0);
  const idempotency::ClaimRecord failed = read("CHG-1");
  auto stale = idempotency::fence_of(failed);
  stale.fence += 1;
  auto refused =
      operators_.reopen({.key = "CHG-1", .read = stale, .new_token = "op-tok", .audit = audit_});
  ASSERT_TRUE(refused);
  EXPECT_EQ(*refused, OperatorWrite::Refused);
  EXPECT_EQ(read("CHG-1"), failed) << "a refused write changes nothing";

  auto written = operators_.reopen({.key = "CHG-1",
                                    .read = idempotency::fence_of(failed),
                                    .new_token = "op-tok",
                                    .audit = audit_});
  ASSERT_TRUE(written) << written.error().message;
  EXPECT_EQ(*written, OperatorWrite::Written);
  const idempotency::ClaimRecord reopened = read("CHG-1");
  EXPECT_EQ(reopened.state, idempotency::ClaimState::InProgress);
  EXPECT_EQ(reopened.lease_until, Instant{});
  EXPECT_EQ(reopened.claim_token, "op-tok");
  EXPECT_EQ(reopened.payload_hash, "h");
  EXPECT_EQ(reopened.fence, failed.fence);
  EXPECT_TRUE(reopened.status.empty() && reopened.failure_reason.empty());
  EXPECT_FALSE(reopened.completed_at);
  EXPECT_FALSE(reopened.first_attempt_at) << "a fresh window for the next claim";
  EXPECT_EQ(reopened.audit, std::vector{audit_});
  EXPECT_TRUE(attention("FAILED").empty());

  // The next delivery with the same payload claims it under the unchanged claim condition.
  auto claimed = event::run_blocking(store_.claim({.key = "CHG-1",
                                                   .payload_hash = "h",
                                                   .token = "w2",
                                                   .owner = "w",
                                                   .now = t0 + 2h,
                                                   .lease = 10s}));
  ASSERT_TRUE(claimed);
  EXPECT_EQ(claimed->outcome, idempotency::ClaimOutcome::Acquired);
  EXPECT_EQ(claimed->record.audit, std::vector{audit_}) << "the audit list stays on the record";

  // A second reopen with the first read is refused: the record moved on.
  auto again = operators_.reopen({.key = "CHG-1",
                                  .read = idempotency::fence_of(failed),
                                  .new_token = "op-2",
                                  .audit = audit_});
  ASSERT_TRUE(again);
  EXPECT_EQ(*again, OperatorWrite::Refused);
}

// Issue 35: the first claim's firstAttemptAt survives a later claim, a DEBIT_UNCERTAIN record is
// settled DONE from the ledger (fenced, out of the index), and reopen starts a fresh window.
TEST_F(OperatorStoreTest, FirstAttemptSurvivesReclaimsAndAnUncertainDebitIsSettledOnce) {
  const auto claim = [&](const std::string& token, Instant at) {
    auto claimed = event::run_blocking(store_.claim({.key = "CHG-U",
                                                     .payload_hash = "h",
                                                     .token = token,
                                                     .owner = "w",
                                                     .now = at,
                                                     .lease = 10s}));
    EXPECT_TRUE(claimed && claimed->outcome == idempotency::ClaimOutcome::Acquired);
    return claimed ? claimed->record : idempotency::ClaimRecord{};
  };
  EXPECT_EQ(claim("t1", t0).first_attempt_at, t0);
  const idempotency::ClaimRecord later = claim("t2", t0 + 1h);
  EXPECT_EQ(later.first_attempt_at, t0) << "if_not_exists: a later claim keeps it";
  EXPECT_TRUE(later.earlier_effect_possible());
  ASSERT_TRUE(event::run_blocking(store_.fail(
      "CHG-U", "t2",
      {.status = "DEBIT_UNCERTAIN", .reason = "DEBIT_UNCERTAIN", .payload = kPayload}, t0 + 1h)));
  EXPECT_EQ(attention("FAILED"), std::vector<std::string>{"CHG-U"});

  const idempotency::ClaimRecord uncertain = read("CHG-U");
  const idempotency::SettleRequest settle{.key = "CHG-U",
                                          .read = idempotency::fence_of(uncertain),
                                          .from_status = "DEBIT_UNCERTAIN",
                                          .to_status = "DEBITED",
                                          .result_ref = "DBT-LEDGER",
                                          .audit = audit_};
  EXPECT_EQ(operators_.settle(settle), idempotency::OperatorWrite::Written);
  const idempotency::ClaimRecord settled = read("CHG-U");
  EXPECT_EQ(settled.state, idempotency::ClaimState::Done);
  EXPECT_EQ(settled.status, "DEBITED");
  EXPECT_EQ(settled.result_ref, "DBT-LEDGER");
  EXPECT_EQ(settled.failure_reason, "");
  EXPECT_EQ(settled.payload, kPayload) << "kept for reconcile";
  EXPECT_EQ(settled.audit, std::vector{audit_});
  EXPECT_TRUE(attention("FAILED").empty());
  EXPECT_EQ(operators_.settle(settle), idempotency::OperatorWrite::Refused) << "only once";
}

TEST_F(OperatorStoreTest, AmendMovesAFailedNotificationToDebitedOnce) {
  finish("CHG-2", "DEBITED_NOTIFICATION_FAILED", t0);
  const idempotency::ClaimRecord before = read("CHG-2");
  const idempotency::AuditEntry attempt{.at = t0 + 1h,
                                        .actor = "bob",
                                        .action = "renotify",
                                        .reason = "notification failed again: 503"};
  auto recorded = operators_.amend({.key = "CHG-2",
                                    .read = idempotency::fence_of(before),
                                    .from_status = "DEBITED_NOTIFICATION_FAILED",
                                    .audit = attempt});
  ASSERT_TRUE(recorded && *recorded == OperatorWrite::Written);
  EXPECT_EQ(attention("DEBITED_NOTIFICATION_FAILED"), std::vector<std::string>{"CHG-2"});

  const idempotency::AuditEntry sent{
      .at = t0 + 2h, .actor = "bob", .action = "renotify", .reason = "notification sent"};
  auto amended = operators_.amend({.key = "CHG-2",
                                   .read = idempotency::fence_of(before),
                                   .from_status = "DEBITED_NOTIFICATION_FAILED",
                                   .to_status = "DEBITED",
                                   .audit = sent});
  ASSERT_TRUE(amended && *amended == OperatorWrite::Written);
  const idempotency::ClaimRecord after = read("CHG-2");
  EXPECT_EQ(after.state, idempotency::ClaimState::Done);
  EXPECT_EQ(after.status, "DEBITED");
  EXPECT_EQ(after.result_ref, "DBT") << "the debit is never touched";
  EXPECT_EQ(after.audit, (std::vector{attempt, sent}));
  EXPECT_EQ(after.payload, kPayload) << "kept for reconcile";
  EXPECT_TRUE(attention("DEBITED_NOTIFICATION_FAILED").empty());

  auto twice = operators_.amend({.key = "CHG-2",
                                 .read = idempotency::fence_of(before),
                                 .from_status = "DEBITED_NOTIFICATION_FAILED",
                                 .to_status = "DEBITED",
                                 .audit = sent});
  ASSERT_TRUE(twice);
  EXPECT_EQ(*twice, OperatorWrite::Refused);
}

TEST_F(OperatorStoreTest, TheStaleScanFindsOnlyExpiredClaimsInProgress) {
  finish("CHG-DONE", "DEBITED", t0);
  for (auto [key, at] : {std::pair{"CHG-OLD", t0}, std::pair{"CHG-NEW", t0 + 1h}}) {
    auto claimed = event::run_blocking(store_.claim(
        {.key = key, .payload_hash = "h", .token = "t", .owner = "w", .now = at, .lease = 10s}));
    ASSERT_TRUE(claimed && claimed->outcome == idempotency::ClaimOutcome::Acquired);
  }
  std::vector<std::string> keys;
  std::string cursor;
  int pages = 0;
  do {
    auto page = operators_.stale_in_progress(t0 + 30min, cursor, 1);
    ASSERT_TRUE(page) << page.error().message;
    for (const auto& r : page->records) keys.push_back(r.key);
    cursor = page->next;
    ++pages;
  } while (!cursor.empty() && pages < 10);
  EXPECT_EQ(keys, std::vector<std::string>{"CHG-OLD"});
  EXPECT_GE(pages, 2) << "one item per page: the Scan pages";
}

// reconcile's reads: BatchGetItem of distinct keys (absent ones simply missing), and the Scan
// for records debited in a window (FAILED and out-of-window records filtered out).
TEST_F(OperatorStoreTest, ReconcileReadsRecordsByKeyAndTheDebitedOfAWindow) {
  finish("CHG-OK", "DEBITED", t0);
  finish("CHG-UNNOTIFIED", "DEBITED_NOTIFICATION_FAILED", t0 + 1min);
  finish("CHG-NSF", "FAILED_PERMANENT", t0);
  finish("CHG-LATE", "DEBITED", t0 + 2h);
  const std::vector<std::string> keys = {"CHG-OK", "CHG-NSF", "CHG-NEVER"};
  auto got = operators_.get_many(keys);
  ASSERT_TRUE(got) << got.error().code << " " << got.error().message;
  std::vector<std::string> found;
  for (const auto& r : *got) found.push_back(r.key);
  std::ranges::sort(found);
  EXPECT_EQ(found, (std::vector<std::string>{"CHG-NSF", "CHG-OK"}));

  std::vector<std::string> debited;
  std::string cursor;
  do {
    auto page = operators_.debited_between(t0 - 1min, t0 + 1h, cursor, 1);
    ASSERT_TRUE(page) << page.error().code << " " << page.error().message;
    for (const auto& r : page->records) debited.push_back(r.key);
    cursor = page->next;
  } while (!cursor.empty());
  std::ranges::sort(debited);
  EXPECT_EQ(debited, (std::vector<std::string>{"CHG-OK", "CHG-UNNOTIFIED"}));
}

}  // namespace
}  // namespace ic::dynamodb
