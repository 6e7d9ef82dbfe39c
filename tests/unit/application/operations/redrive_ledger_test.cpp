// redrive's rules, without a queue: which messages move, each at most once per run, what the
// copy carries, and the summary by reason.
#include "application/operations/redrive_ledger.hpp"

#include <gtest/gtest.h>

namespace ic::application {
namespace {

consumer::Message dead_letter(std::string id, std::string reason,
                              consumer::MessageAttributes extra = {}) {
  consumer::Message m{.message_id = std::move(id), .receipt_handle = "rh", .body = "{}"};
  m.message_attributes = std::move(extra);
  if (!reason.empty()) m.message_attributes["failureReason"] = {"String", std::move(reason)};
  return m;
}

TEST(RedriveLedgerTest, ByDefaultOnlyMessagesWithoutAFailureReasonMove) {
  RedriveLedger ledger({.budget = 4});
  EXPECT_EQ(ledger.decide(dead_letter("m1", "")), RedriveDecision::Move);
  EXPECT_EQ(ledger.decide(dead_letter("m2", "PREVIOUSLY_FAILED")), RedriveDecision::Skip);
  EXPECT_EQ(ledger.decide(dead_letter("m3", "PAYLOAD_MISMATCH")), RedriveDecision::Skip);
  EXPECT_EQ(ledger.decide(dead_letter("m4", "INVALID_MESSAGE")), RedriveDecision::Skip);
  EXPECT_TRUE(ledger.exhausted());
  EXPECT_EQ(ledger.moved_count(), 1u);
  EXPECT_EQ(ledger.summary(), nlohmann::json::parse(R"({
      "NONE": {"moved": 1, "skipped": 0, "returned": 0},
      "PREVIOUSLY_FAILED": {"moved": 0, "skipped": 1, "returned": 0},
      "PAYLOAD_MISMATCH": {"moved": 0, "skipped": 1, "returned": 0},
      "INVALID_MESSAGE": {"moved": 0, "skipped": 1, "returned": 0}})"));
}

TEST(RedriveLedgerTest, AReasonAskedForIsMovedToo) {
  RedriveLedger ledger({.reasons = {"PREVIOUSLY_FAILED"}, .budget = 3});
  EXPECT_EQ(ledger.decide(dead_letter("m1", "PREVIOUSLY_FAILED")), RedriveDecision::Move);
  EXPECT_EQ(ledger.decide(dead_letter("m2", "")), RedriveDecision::Move);
  EXPECT_EQ(ledger.decide(dead_letter("m3", "PAYLOAD_MISMATCH")), RedriveDecision::Skip);
}

TEST(RedriveLedgerTest, ACopyThatComesBackIsNeverMovedTwiceInOneRun) {
  RedriveLedger ledger({.reasons = {"PREVIOUSLY_FAILED"}, .budget = 10});
  ASSERT_EQ(ledger.decide(dead_letter("m1", "PREVIOUSLY_FAILED")), RedriveDecision::Move);
  ledger.moved("copy-1");
  // The consumer dead-letters the copy again: a new message whose sourceMessageId is the copy.
  auto again =
      dead_letter("m1-again", "PREVIOUSLY_FAILED", {{"sourceMessageId", {"String", "copy-1"}}});
  EXPECT_EQ(ledger.decide(again), RedriveDecision::Returned);
  EXPECT_EQ(ledger.summary()["PREVIOUSLY_FAILED"]["returned"], 1);
  EXPECT_EQ(ledger.moved_count(), 1u);
}

TEST(RedriveLedgerTest, TheSameMessageReceivedTwiceIsDecidedOnceAndSpendsNoBudget) {
  RedriveLedger ledger({.budget = 2});
  EXPECT_EQ(ledger.decide(dead_letter("m1", "")), RedriveDecision::Move);
  EXPECT_EQ(ledger.decide(dead_letter("m1", "")), RedriveDecision::Repeat);
  EXPECT_FALSE(ledger.exhausted());
  EXPECT_EQ(ledger.moved_count(), 1u);
}

TEST(RedriveLedgerTest, TheBudgetIsTheDepthAtTheStart) {
  RedriveLedger empty({.budget = 0});
  EXPECT_TRUE(empty.exhausted());
  RedriveLedger one({.budget = 1});
  EXPECT_FALSE(one.exhausted());
  (void)one.decide(dead_letter("m1", "INVALID_MESSAGE"));
  EXPECT_TRUE(one.exhausted());
}

TEST(RedriveLedgerTest, TheCopyKeepsTheProducersAttributesAndDropsTheConsumers) {
  auto m = dead_letter("m1", "PREVIOUSLY_FAILED",
                       {{"failureDetail", {"String", "charge already failed permanently"}},
                        {"chargeId", {"String", "CHG-1"}},
                        {"sourceMessageId", {"String", "src-1"}},
                        {"traceparent", {"String", "00-abc-def-01"}},
                        {"batch", {"Number", "42"}},
                        {"blob", {"Binary", "AAEC"}}});
  EXPECT_EQ(producer_attributes(m),
            (consumer::MessageAttributes{{"traceparent", {"String", "00-abc-def-01"}},
                                         {"batch", {"Number", "42"}},
                                         {"blob", {"Binary", "AAEC"}}}));
}

TEST(RedriveLedgerTest, TheChargeIdComesFromTheAttributeElseFromTheBody) {
  auto with_attribute = dead_letter("m1", "PAYLOAD_MISMATCH", {{"chargeId", {"String", "CHG-A"}}});
  EXPECT_EQ(charge_id_of(with_attribute), "CHG-A");
  auto body_only = dead_letter("m2", "");
  body_only.body = R"({"schemaVersion":1,"chargeId":"CHG-B","amountMinor":"x"})";
  EXPECT_EQ(charge_id_of(body_only), "CHG-B");
  body_only.body = "not json";
  EXPECT_EQ(charge_id_of(body_only), "");
  EXPECT_EQ(failure_reason_of(body_only), kNoReason);
}

}  // namespace
}  // namespace ic::application
