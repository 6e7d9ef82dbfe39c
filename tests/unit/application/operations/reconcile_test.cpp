// reconcile over an in-memory ledger and table: each kind planted in an otherwise clean
// ledger is reported for exactly that charge, a clean ledger is 0 discrepancies, batches never
// exceed BatchGetItem's limit or repeat a key, and a malformed row is one note and exit 2.
#include "application/operations/reconcile.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

#include "application/operations/commands.hpp"
#include "testing/clocks.hpp"
#include "testing/string_console.hpp"

namespace ic::application {
namespace {

using idempotency::ClaimRecord;
using idempotency::ClaimState;
using nlohmann::json;
using namespace std::chrono_literals;

using testing::t0;

using ic::testing::StringConsole;

class RowsLedger final : public LedgerSource {
 public:
  std::vector<LedgerRow> rows;
  std::optional<LedgerError> error_after_rows;
  std::expected<std::optional<LedgerRow>, LedgerError> next() override {
    if (at_ < rows.size()) return rows[at_++];
    if (error_after_rows) return std::unexpected(*error_after_rows);
    return std::nullopt;
  }

 private:
  std::size_t at_ = 0;
};

class MapRecords final : public RecordSource {
 public:
  std::map<std::string, ClaimRecord, std::less<>> records;
  std::size_t largest_batch = 0;
  bool repeated_key = false;
  bool scanned = false;

  std::expected<std::vector<ClaimRecord>, Error> get_many(
      std::span<const std::string> keys) override {
    largest_batch = std::max(largest_batch, keys.size());
    std::vector<ClaimRecord> out;
    std::set<std::string, std::less<>> asked;
    for (const std::string& key : keys) {
      repeated_key |= !asked.insert(key).second;
      if (auto it = records.find(key); it != records.end()) out.push_back(it->second);
    }
    return out;
  }
  std::expected<idempotency::RecordPage, Error> debited_between(Instant, Instant, bool full,
                                                                std::string_view, int) override {
    scanned = full;
    idempotency::RecordPage page;
    for (const auto& [key, r] : records) {
      if (full || r.status == "DEBITED_NOTIFICATION_FAILED") page.records.push_back(r);
    }
    return page;
  }
};

ClaimRecord debited(const std::string& key, Instant at, std::string status = "DEBITED") {
  return ClaimRecord{.key = key,
                     .state = ClaimState::Done,
                     .status = std::move(status),
                     .result_ref = "DBT-" + key,
                     .completed_at = at,
                     .payload = "v1|" + key + "|ACC-0012345678|SMS_ALERT_FEE|2500|INR|2025-11-30"};
}

LedgerRow row_of(const std::string& key, Instant at, std::size_t line) {
  return LedgerRow{.idempotency_key = key,
                   .debit_id = "DBT-" + key,
                   .account_id = "ACC-0012345678",
                   .amount_minor = 2500,
                   .currency = "INR",
                   .posted_at = at,
                   .line = line};
}

class ReconcileTest : public ::testing::Test {
 protected:
  // 250 charges debited and posted alike: more than two batches.
  void SetUp() override {
    for (int i = 0; i < 250; ++i) {
      const std::string key = "CHG-" + std::to_string(i);
      const Instant at = t0 + std::chrono::seconds(i);
      records_.records[key] = debited(key, at + 20ms);
      ledger_.rows.push_back(row_of(key, at, static_cast<std::size_t>(i) + 2));
    }
  }

  int run(bool full = true) {
    request_.full_scan = full;
    return reconcile(ledger_, records_, console_, request_);
  }
  std::vector<json> discrepancies() const {
    std::vector<json> out;
    for (const auto& line : console_.results) {
      auto j = json::parse(line);
      if (j.contains("kind")) out.push_back(std::move(j));
    }
    return out;
  }
  json summary() const { return json::parse(console_.results.back()); }
  // Exactly one discrepancy, of `kind`, for `key`.
  void expect_only(std::string_view kind, std::string_view key) {
    const auto found = discrepancies();
    ASSERT_EQ(found.size(), 1U) << ::testing::PrintToString(console_.results);
    EXPECT_EQ(found[0]["kind"], kind);
    EXPECT_EQ(found[0]["chargeId"], key);
    EXPECT_EQ(summary()["discrepancies"][std::string(kind)], 1);
  }

  RowsLedger ledger_;
  MapRecords records_;
  StringConsole console_;
  ReconcileRequest request_{.lease = 60s};
};

TEST_F(ReconcileTest, ACleanLedgerMatchesEveryRowInBatchesOfAtMostOneHundredKeys) {
  EXPECT_EQ(run(), 0);
  EXPECT_EQ(discrepancies().size(), 0U);
  const json s = summary();
  EXPECT_EQ(s["event"], "reconciled");
  EXPECT_EQ(s["ledgerRows"], 250);
  EXPECT_EQ(s["records"], 250);
  EXPECT_EQ(s["matched"], 250);
  for (const auto& [kind, n] : s["discrepancies"].items()) EXPECT_EQ(n, 0) << kind;
  EXPECT_EQ(s["since"], "2025-11-29T23:59:00.000Z") << "first postedAt minus one lease";
  EXPECT_EQ(records_.largest_batch, kMaxBatchKeys);
  EXPECT_FALSE(records_.repeated_key);
}

TEST_F(ReconcileTest, ADebitWhoseRecordIsAbsentInProgressOrFailedIsNotRecorded) {
  for (const auto& mutate : std::vector<std::function<void()>>{
           [&] { records_.records.erase("CHG-7"); },
           [&] { records_.records["CHG-7"] = {.key = "CHG-7", .lease_until = t0 + 1h}; },
           [&] {
             records_.records["CHG-7"] = {.key = "CHG-7",
                                          .state = ClaimState::Failed,
                                          .status = "FAILED_PERMANENT",
                                          .failure_reason = "INSUFFICIENT_FUNDS"};
           }}) {
    console_ = {};
    ledger_ = {};
    records_.records.clear();
    SetUp();
    mutate();
    EXPECT_EQ(run(), kFoundExit);
    expect_only("DEBITED_NOT_RECORDED", "CHG-7");
    EXPECT_EQ(discrepancies()[0]["bank"]["line"], 9);
  }
}

TEST_F(ReconcileTest, ARecordDebitedInTheWindowWithoutARowIsRecordedNotDebited) {
  ledger_.rows.erase(ledger_.rows.begin() + 100);  // CHG-100
  EXPECT_EQ(run(), kFoundExit);
  expect_only("RECORDED_NOT_DEBITED", "CHG-100");
  EXPECT_EQ(discrepancies()[0]["bank"], json::object());
  EXPECT_EQ(discrepancies()[0]["table"]["debitRef"], "DBT-CHG-100");
}

TEST_F(ReconcileTest, RecordsOutsideTheWindowAreNotExpectedInTheLedger) {
  records_.records["CHG-OLD"] = debited("CHG-OLD", t0 - 2min);
  records_.records["CHG-LATE"] = debited("CHG-LATE", t0 + 250s + 2min);
  EXPECT_EQ(run(), 0);
}

TEST_F(ReconcileTest, WithoutFullOnlyTheAttentionIndexIsAskedForUnpostedRecords) {
  ledger_.rows.erase(ledger_.rows.begin() + 100);
  ledger_.rows.erase(ledger_.rows.begin() + 10);
  records_.records["CHG-10"].status = "DEBITED_NOTIFICATION_FAILED";
  EXPECT_EQ(run(/*full=*/false), kFoundExit);
  expect_only("RECORDED_NOT_DEBITED", "CHG-10");
  EXPECT_FALSE(summary()["fullScan"]);
}

TEST_F(ReconcileTest, AnAmountCurrencyOrAccountThatDiffersIsAMismatch) {
  for (const auto& mutate : std::vector<std::function<void(LedgerRow&)>>{
           [](LedgerRow& r) { r.amount_minor = 2501; }, [](LedgerRow& r) { r.currency = "USD"; },
           [](LedgerRow& r) { r.account_id = "ACC-0099999999"; }}) {
    console_ = {};
    ledger_ = {};
    SetUp();
    mutate(ledger_.rows[42]);
    EXPECT_EQ(run(), kFoundExit);
    expect_only("AMOUNT_MISMATCH", "CHG-42");
    const json d = discrepancies()[0];
    EXPECT_EQ(d["table"]["accountId"], "**********5678") << "masked";
    EXPECT_THAT(d["bank"]["accountId"].get<std::string>(), ::testing::StartsWith("****"));
  }
}

TEST_F(ReconcileTest, ADebitIdThatIsNotTheRecordsDebitRefIsARefMismatch) {
  ledger_.rows[3].debit_id = "DBT-OTHER";
  EXPECT_EQ(run(), kFoundExit);
  expect_only("DEBIT_REF_MISMATCH", "CHG-3");
  EXPECT_EQ(summary()["matched"], 249);
}

TEST_F(ReconcileTest, ASecondRowForOneKeyIsADuplicateDebitAndTheFirstStillMatches) {
  ledger_.rows.push_back(row_of("CHG-5", t0 + 200s, 300));
  ledger_.rows.back().debit_id = "DBT-AGAIN";
  EXPECT_EQ(run(), kFoundExit);
  expect_only("DUPLICATE_DEBIT", "CHG-5");
  EXPECT_EQ(discrepancies()[0]["bank"]["debitId"], "DBT-AGAIN");
  EXPECT_EQ(summary()["matched"], 250);
  EXPECT_FALSE(records_.repeated_key) << "BatchGetItem refuses a repeated key";
}

TEST_F(ReconcileTest, AMalformedRowIsOneNoteAndExitTwoWithoutASummary) {
  ledger_.error_after_rows = LedgerError{.line = 252, .column = "amountMinor", .message = "bad"};
  EXPECT_EQ(run(), kInputErrorExit);
  EXPECT_TRUE(console_.results.empty());
  ASSERT_EQ(console_.notes.size(), 1U);
  EXPECT_EQ(console_.notes[0], "reconcile: line 252, column amountMinor: bad");
}

TEST_F(ReconcileTest, TextFormatPrintsOneLinePerDiscrepancyAndTheSummary) {
  records_.records.erase("CHG-1");
  request_.text = true;
  EXPECT_EQ(run(), kFoundExit);
  ASSERT_EQ(console_.results.size(), 2U);
  EXPECT_THAT(console_.results[0], ::testing::StartsWith("DEBITED_NOT_RECORDED CHG-1 "));
  EXPECT_THAT(console_.results[1], ::testing::HasSubstr("249 matched, 1 discrepancies"));
}

}  // namespace
}  // namespace ic::application
