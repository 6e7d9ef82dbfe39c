// The operator's actions decide from the record they read and write only that record: reopen
// only FAILED (never DONE), renotify only DEBITED_NOTIFICATION_FAILED, and a record that changed
// in between (a consumer's claim, another operator) is refused loudly, never overwritten.
#include "application/operations/operator_actions.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <functional>
#include <map>

#include "application/operations/reconcile.hpp"
#include "application/payload_hash.hpp"
#include "testing/clocks.hpp"
#include "testing/fakes.hpp"
#include "testing/string_console.hpp"

namespace ic::application {
namespace {

using Kind = OperatorOutcome::Kind;
using ::testing::HasSubstr;
using namespace std::chrono_literals;

// A table of records that evaluates the operator writes' conditions (docs/design.md §3) on its
// map. `between_read_and_write` runs inside each write before its condition: a race.
class TableFake final : public idempotency::IdempotencyStore, public idempotency::OperatorStore {
 public:
  std::map<std::string, idempotency::ClaimRecord, std::less<>> records;
  std::function<void()> between_read_and_write;
  int writes = 0;

  // The store's side answers at once, without suspending; only get() is part of these tests.
  Task<idempotency::ClaimReply> claim(const idempotency::ClaimRequest&) override {
    co_return std::unexpected(unused());
  }
  Task<idempotency::WriteReply> complete(std::string_view, std::string_view,
                                         const idempotency::Completion&, Instant) override {
    co_return std::unexpected(unused());
  }
  Task<idempotency::WriteReply> fail(std::string_view, std::string_view,
                                     const idempotency::Failure&, Instant) override {
    co_return std::unexpected(unused());
  }
  Task<idempotency::WriteReply> extend(std::string_view, std::string_view, Instant) override {
    co_return std::unexpected(unused());
  }
  Task<idempotency::WriteReply> release(std::string_view, std::string_view) override {
    co_return std::unexpected(unused());
  }
  Task<idempotency::ReadReply> get(std::string_view key) override {
    auto it = records.find(key);
    co_return it == records.end() ? std::nullopt : std::optional(it->second);
  }

  std::expected<idempotency::OperatorWrite, Error> reopen(
      const idempotency::ReopenRequest& r) override {
    return write(r.key, r.read, [&](idempotency::ClaimRecord& record) {
      if (record.state != idempotency::ClaimState::Failed) return false;
      record.state = idempotency::ClaimState::InProgress;
      record.lease_until = Instant{};
      record.claim_token = r.new_token;
      record.status.clear();
      record.failure_reason.clear();
      record.payload.clear();
      record.audit.push_back(r.audit);
      return true;
    });
  }
  std::expected<idempotency::OperatorWrite, Error> amend(
      const idempotency::AmendRequest& r) override {
    return write(r.key, r.read, [&](idempotency::ClaimRecord& record) {
      if (record.state != idempotency::ClaimState::Done || record.status != r.from_status)
        return false;
      if (!r.to_status.empty()) record.status = r.to_status;
      record.audit.push_back(r.audit);
      return true;
    });
  }
  std::expected<idempotency::OperatorWrite, Error> settle(
      const idempotency::SettleRequest& r) override {
    return write(r.key, r.read, [&](idempotency::ClaimRecord& record) {
      if (record.state != idempotency::ClaimState::Failed || record.status != r.from_status)
        return false;
      record.state = idempotency::ClaimState::Done;
      record.status = r.to_status;
      record.result_ref = r.result_ref;
      record.failure_reason.clear();
      record.audit.push_back(r.audit);
      return true;
    });
  }
  std::expected<idempotency::RecordPage, Error> needing_attention(std::string_view attention,
                                                                  Instant,
                                                                  std::string_view) override {
    idempotency::RecordPage page;
    for (const auto& [key, record] : records) {
      if (attention == "FAILED" && record.state == idempotency::ClaimState::Failed)
        page.records.push_back(record);
    }
    return page;
  }
  std::expected<idempotency::RecordPage, Error> stale_in_progress(Instant, std::string_view,
                                                                  int) override {
    return std::unexpected(unused());
  }

 private:
  static Error unused() { return {.code = "Unused", .message = "not part of this test"}; }
  std::expected<idempotency::OperatorWrite, Error> write(
      const std::string& key, const idempotency::OperatorFence& read,
      const std::function<bool(idempotency::ClaimRecord&)>& apply) {
    if (between_read_and_write) between_read_and_write();
    ++writes;
    auto it = records.find(key);
    if (it == records.end() || it->second.fence != read.fence ||
        it->second.claim_token != read.claim_token || !apply(it->second)) {
      return idempotency::OperatorWrite::Refused;
    }
    return idempotency::OperatorWrite::Written;
  }
};

class OperatorActionsTest : public ::testing::Test {
 protected:
  OperatorActionsTest() {
    auto parsed = domain::parse_canonical_form(kPayload);
    EXPECT_TRUE(parsed);
    hash_ = payload_hash(*parsed);
  }

  idempotency::ClaimRecord record(idempotency::ClaimState state, std::string status) {
    return {.key = "CHG-1",
            .state = state,
            .claim_token = "worker-token",
            .fence = 2,
            .payload_hash = hash_,
            .status = std::move(status),
            .result_ref = state == idempotency::ClaimState::Done ? "DBT-1" : "",
            .payload = kPayload};
  }

  static constexpr const char* kPayload =
      "v1|CHG-1|ACC-0012345678|SMS_ALERT_FEE|2500|INR|2026-11-30";
  std::string hash_;
  TableFake table_;
  testing::ManualClock clock_;
  testing::SequentialTokens tokens_;
  testing::FakeNotifier notifier_;
  OperatorActions actions_{table_, table_, clock_, tokens_, "alice@ops"};
};

TEST_F(OperatorActionsTest, ReopenTurnsAFailedChargeIntoAnExpiredClaimNoWorkerHolds) {
  table_.records["CHG-1"] = record(idempotency::ClaimState::Failed, "FAILED_PERMANENT");
  const OperatorOutcome outcome = actions_.reopen("CHG-1", "account reopened");
  ASSERT_EQ(outcome.kind, Kind::Written) << outcome.detail;
  const idempotency::ClaimRecord& after = table_.records["CHG-1"];
  EXPECT_EQ(after.state, idempotency::ClaimState::InProgress);
  EXPECT_EQ(after.lease_until, Instant{});
  EXPECT_EQ(after.claim_token, "token-1") << "fresh: no worker holds it";
  EXPECT_EQ(after.payload_hash, hash_) << "kept, so only the same payload claims it";
  const idempotency::AuditEntry expected{
      .at = clock_.now(), .actor = "alice@ops", .action = "reopen", .reason = "account reopened"};
  EXPECT_EQ(after.audit, std::vector{expected});
  EXPECT_EQ(outcome.audit, expected);
  ASSERT_TRUE(outcome.charge) << "--resend sends the charge the record kept";
  EXPECT_EQ(domain::canonical_form(*outcome.charge), kPayload);
}

TEST_F(OperatorActionsTest, ReopenNeverTouchesADoneOrInProgressCharge) {
  table_.records["CHG-1"] = record(idempotency::ClaimState::Done, "DEBITED");
  OperatorOutcome outcome = actions_.reopen("CHG-1", "please");
  EXPECT_EQ(outcome.kind, Kind::Refused);
  EXPECT_THAT(outcome.detail, HasSubstr("a DONE charge is never reopened"));
  table_.records["CHG-1"] = record(idempotency::ClaimState::InProgress, "");
  outcome = actions_.reopen("CHG-1", "please");
  EXPECT_EQ(outcome.kind, Kind::Refused);
  EXPECT_THAT(outcome.detail, HasSubstr("only a FAILED charge can be reopened"));
  EXPECT_EQ(table_.writes, 0);
  EXPECT_EQ(actions_.reopen("CHG-NONE", "x").kind, Kind::NotFound);
}

// DEBIT_UNCERTAIN (docs/design.md §3 "The bank's memory of keys"): only the ledger decides.
TEST_F(OperatorActionsTest, AnUncertainDebitIsNeverReopenedByHandOnlyResolvedFromTheLedger) {
  table_.records["CHG-1"] = record(idempotency::ClaimState::Failed, "DEBIT_UNCERTAIN");
  const OperatorOutcome refused = actions_.reopen("CHG-1", "looks unpaid");
  EXPECT_EQ(refused.kind, Kind::Refused);
  EXPECT_THAT(refused.detail, HasSubstr("reconcile --resolve-uncertain"));
  EXPECT_EQ(table_.writes, 0);

  const OperatorOutcome debited =
      actions_.resolve_uncertain("CHG-1", std::string("DBT-LEDGER"), "in the ledger");
  ASSERT_EQ(debited.kind, Kind::Written) << debited.detail;
  const idempotency::ClaimRecord& after = table_.records["CHG-1"];
  EXPECT_EQ(after.state, idempotency::ClaimState::Done);
  EXPECT_EQ(after.status, "DEBITED");
  EXPECT_EQ(after.result_ref, "DBT-LEDGER");
  EXPECT_EQ(after.audit.back().action, "resolve");
  EXPECT_EQ(actions_.resolve_uncertain("CHG-1", std::nullopt, "again").kind, Kind::Refused)
      << "only FAILED/DEBIT_UNCERTAIN is resolved";
}

TEST_F(OperatorActionsTest, AnUncertainDebitTheLedgerDoesNotHaveIsReopened) {
  table_.records["CHG-1"] = record(idempotency::ClaimState::Failed, "DEBIT_UNCERTAIN");
  const OperatorOutcome outcome = actions_.resolve_uncertain("CHG-1", std::nullopt, "not in it");
  ASSERT_EQ(outcome.kind, Kind::Written) << outcome.detail;
  EXPECT_EQ(table_.records["CHG-1"].state, idempotency::ClaimState::InProgress);
  EXPECT_EQ(table_.records["CHG-1"].audit.back().action, "reopen");
}

// The bank's export, as rows.
class ExportRows final : public LedgerSource {
 public:
  explicit ExportRows(std::vector<LedgerRow> rows) : rows_(std::move(rows)) {}
  std::expected<std::optional<LedgerRow>, LedgerError> next() override {
    if (next_ == rows_.size()) return std::nullopt;
    return rows_[next_++];
  }

 private:
  std::vector<LedgerRow> rows_;
  std::size_t next_ = 0;
};

TEST_F(OperatorActionsTest, ResolveUncertainSettlesEachFromTheLedgerAfterADryRun) {
  for (const char* key : {"CHG-1", "CHG-2", "CHG-3"}) {
    auto r = record(idempotency::ClaimState::Failed, "DEBIT_UNCERTAIN");
    r.key = key;
    r.first_attempt_at = clock_.now();
    table_.records[key] = r;
  }
  table_.records["CHG-3"].first_attempt_at = clock_.now() - std::chrono::hours(1);
  const std::vector<LedgerRow> rows{
      {.idempotency_key = "CHG-1", .debit_id = "DBT-7", .posted_at = clock_.now() + 5ms},
      {.idempotency_key = "CHG-OTHER", .debit_id = "DBT-8", .posted_at = clock_.now() + 9ms}};
  testing::StringConsole dry;
  ExportRows first(rows);
  EXPECT_EQ(resolve_uncertain(first, table_, actions_, dry, {.lease = 60s, .dry_run = true}), 6);
  EXPECT_EQ(table_.writes, 0);
  EXPECT_EQ(dry.result_json(3), (nlohmann::json{{"event", "uncertain resolved"},
                                                {"dryRun", true},
                                                {"debited", 1},
                                                {"reopened", 1},
                                                {"unresolved", 1}}));

  testing::StringConsole console;
  ExportRows again(rows);
  EXPECT_EQ(resolve_uncertain(again, table_, actions_, console, {.lease = 60s}), 6)
      << "CHG-3's first attempt is before the ledger starts";
  EXPECT_EQ(console.result_json(0)["as"], "DEBITED");
  EXPECT_EQ(table_.records["CHG-1"].result_ref, "DBT-7");
  EXPECT_EQ(table_.records["CHG-2"].state, idempotency::ClaimState::InProgress) << "reopened";
  EXPECT_EQ(console.result_json(2)["event"], "unresolved");
  EXPECT_EQ(table_.records["CHG-3"].status, "DEBIT_UNCERTAIN") << "left for a longer export";
}

TEST_F(OperatorActionsTest, AReopenRacedByAConsumerIsRefusedAndWritesNothing) {
  table_.records["CHG-1"] = record(idempotency::ClaimState::Failed, "FAILED_PERMANENT");
  // After our read, another operator reopens it and a consumer claims and fails it again:
  // FAILED again, but not the record this operator decided on.
  table_.between_read_and_write = [this] {
    idempotency::ClaimRecord& r = table_.records["CHG-1"];
    r.fence = 3;
    r.claim_token = "consumer-token";
    table_.between_read_and_write = nullptr;
  };
  const OperatorOutcome outcome = actions_.reopen("CHG-1", "account reopened");
  EXPECT_EQ(outcome.kind, Kind::Refused);
  EXPECT_THAT(outcome.detail,
              HasSubstr("changed after it was read (read FAILED (FAILED_PERMANENT), "
                        "fence 2, now FAILED (FAILED_PERMANENT), fence 3)"));
  EXPECT_THAT(outcome.detail, HasSubstr("nothing written"));
  EXPECT_TRUE(table_.records["CHG-1"].audit.empty());
  EXPECT_EQ(table_.records["CHG-1"].state, idempotency::ClaimState::Failed);
}

TEST_F(OperatorActionsTest, RenotifyResendsWithTheSameKeyThenRecordsDebited) {
  table_.records["CHG-1"] = record(idempotency::ClaimState::Done, "DEBITED_NOTIFICATION_FAILED");
  const OperatorOutcome outcome = actions_.renotify("CHG-1", notifier_);
  ASSERT_EQ(outcome.kind, Kind::Written) << outcome.detail;
  EXPECT_EQ(notifier_.keys(), std::vector<std::string>{"CHG-1:notify"});
  const idempotency::ClaimRecord& after = table_.records["CHG-1"];
  EXPECT_EQ(after.state, idempotency::ClaimState::Done);
  EXPECT_EQ(after.status, "DEBITED");
  ASSERT_EQ(after.audit.size(), 1u);
  EXPECT_EQ(after.audit[0].action, "renotify");
  EXPECT_EQ(after.audit[0].reason, "notification sent");
}

TEST_F(OperatorActionsTest, AFailedRenotifyIsRecordedAsAnAttemptAndKeepsTheStatus) {
  table_.records["CHG-1"] = record(idempotency::ClaimState::Done, "DEBITED_NOTIFICATION_FAILED");
  notifier_.fail_all();
  const OperatorOutcome outcome = actions_.renotify("CHG-1", notifier_);
  EXPECT_EQ(outcome.kind, Kind::NotificationFailed);
  const idempotency::ClaimRecord& after = table_.records["CHG-1"];
  EXPECT_EQ(after.status, "DEBITED_NOTIFICATION_FAILED");
  ASSERT_EQ(after.audit.size(), 1u);
  EXPECT_EQ(after.audit[0].reason, "notification failed again: gateway down");
}

TEST_F(OperatorActionsTest, RenotifyRefusesEverythingButAFailedNotification) {
  table_.records["CHG-1"] = record(idempotency::ClaimState::Done, "DEBITED");
  EXPECT_EQ(actions_.renotify("CHG-1", notifier_).kind, Kind::Refused);
  table_.records["CHG-1"] = record(idempotency::ClaimState::Failed, "FAILED_PERMANENT");
  EXPECT_EQ(actions_.renotify("CHG-1", notifier_).kind, Kind::Refused);
  // A kept payload that does not hash to the record's payloadHash is never used.
  table_.records["CHG-1"] = record(idempotency::ClaimState::Done, "DEBITED_NOTIFICATION_FAILED");
  table_.records["CHG-1"].payload = "v1|CHG-1|ACC-0012345678|SMS_ALERT_FEE|9999|INR|2026-11-30";
  const OperatorOutcome tampered = actions_.renotify("CHG-1", notifier_);
  EXPECT_EQ(tampered.kind, Kind::Refused);
  EXPECT_THAT(tampered.detail, HasSubstr("does not match the record's payloadHash"));
  EXPECT_TRUE(notifier_.keys().empty()) << "nothing was sent";
  EXPECT_EQ(table_.writes, 0);
}

}  // namespace
}  // namespace ic::application
