// The operator's requests carry docs/design.md §3's "Operator writes" expressions exactly; the
// attention attributes are written only by the final writes that need a person; audit lists
// decode. No network.
#include "adapters/dynamodb/operator_codec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/clocks.hpp"

namespace ic::dynamodb {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

using testing::t0;
const TableSpec kOperatorTable{.name = "idem",
                               .retention = std::chrono::hours(24),
                               .result_attribute = "debitRef",
                               .attention_statuses = {"DEBITED_NOTIFICATION_FAILED"}};
const idempotency::AuditEntry kAudit{
    .at = t0, .actor = "alice@ops", .action = "reopen", .reason = "account reopened"};

TEST(OperatorCodec, ReopenIsFencedOnTheFailedRecordReadAndAppendsTheAuditEntry) {
  const json body = encode_reopen(kOperatorTable, {.key = "CHG-1",
                                                   .read = {.fence = 3, .claim_token = "tok-3"},
                                                   .new_token = "operator-tok",
                                                   .audit = kAudit});
  EXPECT_EQ(body["Key"], json::parse(R"({"pk":{"S":"CHG-1"}})"));
  EXPECT_EQ(body["ConditionExpression"],
            "#state = :failed AND fence = :fence AND claimToken = :read");
  EXPECT_EQ(body["UpdateExpression"],
            "SET #state = :inprogress, leaseUntil = :zero, claimToken = :token, updatedAt = :now, "
            "expiresAt = :exp, audit = list_append(if_not_exists(audit, :none), :entry) "
            "REMOVE #status, failureReason, completedAt, attention, attentionAt, payload, "
            "firstAttemptAt");
  const json& v = body["ExpressionAttributeValues"];
  EXPECT_EQ(v[":failed"], json::parse(R"({"S":"FAILED"})"));
  EXPECT_EQ(v[":fence"], json::parse(R"({"N":"3"})"));
  EXPECT_EQ(v[":read"], json::parse(R"({"S":"tok-3"})"));
  EXPECT_EQ(v[":token"], json::parse(R"({"S":"operator-tok"})"));
  EXPECT_EQ(v[":zero"], json::parse(R"({"N":"0"})"));
  EXPECT_EQ(v[":exp"], json::parse(R"({"N":"1764547200"})"));
  EXPECT_EQ(v[":entry"], json::parse(R"({"L":[{"M":{
      "at":{"N":"1764460800000"},"actor":{"S":"alice@ops"},
      "action":{"S":"reopen"},"reason":{"S":"account reopened"}}}]})"));
  EXPECT_EQ(body["ExpressionAttributeNames"],
            json::parse(R"({"#state":"state","#status":"status"})"));
  EXPECT_THAT(body.dump(), Not(HasSubstr("payloadHash"))) << "the payload hash is kept";
}

TEST(OperatorCodec, SettleRecordsAnUncertainDebitDoneWithTheLedgersReference) {
  const json body = encode_settle(kOperatorTable, {.key = "CHG-3",
                                                   .read = {.fence = 2, .claim_token = "tok-2"},
                                                   .from_status = "DEBIT_UNCERTAIN",
                                                   .to_status = "DEBITED",
                                                   .result_ref = "DBT-9",
                                                   .audit = kAudit});
  EXPECT_EQ(body["ConditionExpression"],
            "#state = :failed AND #status = :from AND fence = :fence AND claimToken = :read");
  EXPECT_EQ(body["UpdateExpression"],
            "SET #state = :done, #status = :to, #result = :ref, completedAt = :now, "
            "updatedAt = :now, expiresAt = :exp, audit = list_append(if_not_exists(audit, "
            ":none), :entry) REMOVE failureReason, attention, attentionAt");
  const json& v = body["ExpressionAttributeValues"];
  EXPECT_EQ(v[":from"], json::parse(R"({"S":"DEBIT_UNCERTAIN"})"));
  EXPECT_EQ(v[":to"], json::parse(R"({"S":"DEBITED"})"));
  EXPECT_EQ(v[":ref"], json::parse(R"({"S":"DBT-9"})"));
  EXPECT_EQ(body["ExpressionAttributeNames"],
            json::parse(R"({"#state":"state","#status":"status","#result":"debitRef"})"));
  EXPECT_THAT(body.dump(), Not(HasSubstr("payload"))) << "the kept payload stays, for reconcile";
}

TEST(OperatorCodec, AmendMovesTheStatusOnlyFromTheOneReadAndLeavesTheIndex) {
  const json body = encode_amend(kOperatorTable, {.key = "CHG-2",
                                                  .read = {.fence = 1, .claim_token = "tok-1"},
                                                  .from_status = "DEBITED_NOTIFICATION_FAILED",
                                                  .to_status = "DEBITED",
                                                  .audit = kAudit});
  EXPECT_EQ(body["ConditionExpression"],
            "#state = :done AND #status = :from AND fence = :fence AND claimToken = :read");
  EXPECT_EQ(body["UpdateExpression"],
            "SET updatedAt = :now, expiresAt = :exp, audit = list_append(if_not_exists(audit, "
            ":none), :entry), #status = :to REMOVE attention, attentionAt");
  EXPECT_EQ(body["ExpressionAttributeValues"][":to"], json::parse(R"({"S":"DEBITED"})"));
}

TEST(OperatorCodec, AnAmendWithoutANewStatusOnlyRecordsTheAttempt) {
  const json body = encode_amend(kOperatorTable, {.key = "CHG-2",
                                                  .read = {.fence = 1, .claim_token = "tok-1"},
                                                  .from_status = "DEBITED_NOTIFICATION_FAILED",
                                                  .audit = kAudit});
  EXPECT_EQ(body["UpdateExpression"],
            "SET updatedAt = :now, expiresAt = :exp, audit = list_append(if_not_exists(audit, "
            ":none), :entry)");
  EXPECT_FALSE(body["ExpressionAttributeValues"].contains(":to"));
}

TEST(OperatorCodec, OnlyFailuresAndListedStatusesSetTheAttentionAttributes) {
  for (auto [state, status, attention] :
       {std::tuple{idempotency::ClaimState::Failed, "FAILED_PERMANENT", "FAILED"},
        std::tuple{idempotency::ClaimState::Done, "DEBITED_NOTIFICATION_FAILED",
                   "DEBITED_NOTIFICATION_FAILED"},
        std::tuple{idempotency::ClaimState::Done, "DEBITED", ""}}) {
    const json body = json::parse(encode_final(
        kOperatorTable, "CHG-1", "tok",
        {.state = state, .status = status, .payload = "v1|CHG-1|A|T|1|INR|2026-11-30", .now = t0}));
    const std::string update = body["UpdateExpression"];
    EXPECT_EQ(attention_of(kOperatorTable, state, status), attention);
    if (std::string_view(attention).empty()) {
      EXPECT_THAT(update, Not(HasSubstr("attention"))) << "a healthy charge pays no index write";
      EXPECT_THAT(update, HasSubstr("payload = :payload")) << "a debit keeps its charge";
    } else {
      EXPECT_THAT(update, HasSubstr("attention = :attention, attentionAt = :now"));
      EXPECT_THAT(update, HasSubstr("payload = :payload"));
      EXPECT_EQ(body["ExpressionAttributeValues"][":attention"]["S"], attention);
    }
  }
}

TEST(OperatorCodec, TheAttentionQueryUsesTheSparseIndexFromTheCursor) {
  auto first = encode_attention_query(kOperatorTable, "FAILED", t0, "");
  ASSERT_TRUE(first) << first.error();
  EXPECT_EQ((*first)["IndexName"], "attention-index");
  EXPECT_EQ((*first)["KeyConditionExpression"], "attention = :a AND attentionAt >= :since");
  EXPECT_EQ((*first)["ExpressionAttributeValues"][":since"],
            json::parse(R"({"N":"1764460800000"})"));
  EXPECT_FALSE(first->contains("ExclusiveStartKey"));
  auto next = encode_attention_query(kOperatorTable, "FAILED", t0, R"({"pk":{"S":"CHG-9"}})");
  ASSERT_TRUE(next);
  EXPECT_EQ((*next)["ExclusiveStartKey"], json::parse(R"({"pk":{"S":"CHG-9"}})"));
  EXPECT_FALSE(encode_attention_query(kOperatorTable, "FAILED", t0, "not a key"));
}

TEST(OperatorCodec, TheStaleScanIsBoundedAndFiltered) {
  auto body = encode_stale_scan(kOperatorTable, t0, "", 250);
  ASSERT_TRUE(body);
  EXPECT_EQ((*body)["Limit"], 250);
  EXPECT_EQ((*body)["FilterExpression"], "#state = :inprogress AND leaseUntil < :before");
  EXPECT_FALSE(body->contains("IndexName"));
}

TEST(OperatorCodec, PagesDecodeRecordsWithTheirAuditAndTheCursor) {
  const json reply = json::parse(R"({"Items":[{"pk":{"S":"CHG-1"},"state":{"S":"FAILED"},
      "fence":{"N":"2"},"payload":{"S":"v1|x"},
      "audit":{"L":[{"M":{"at":{"N":"1764460800000"},"actor":{"S":"alice@ops"},
                           "action":{"S":"reopen"},"reason":{"S":"account reopened"}}}]}}],
      "LastEvaluatedKey":{"pk":{"S":"CHG-1"}}})");
  auto page = decode_page(kOperatorTable, reply);
  ASSERT_TRUE(page) << page.error();
  ASSERT_EQ(page->records.size(), 1u);
  EXPECT_EQ(page->records[0].payload, "v1|x");
  EXPECT_EQ(page->records[0].audit, std::vector<idempotency::AuditEntry>{kAudit});
  EXPECT_EQ(json::parse(page->next), json::parse(R"({"pk":{"S":"CHG-1"}})"));
  EXPECT_FALSE(
      decode_page(kOperatorTable, json::parse(R"({"Items":[{"pk":{"S":"x"},"state":{"S":"DONE"},
      "audit":{"S":"not a list"}}]})")));
  auto last = decode_page(kOperatorTable, json::parse(R"({"Items":[]})"));
  ASSERT_TRUE(last);
  EXPECT_TRUE(last->next.empty());
}

TEST(OperatorCodec, ABatchGetIsStronglyConsistentAndItsUnprocessedKeysAreAskedAgain) {
  const std::vector<std::string> keys = {"CHG-1", "CHG-2"};
  const json body = encode_batch_get(kOperatorTable, keys);
  EXPECT_EQ(
      body["RequestItems"][kOperatorTable.name],
      json::parse(R"({"Keys":[{"pk":{"S":"CHG-1"}},{"pk":{"S":"CHG-2"}}],"ConsistentRead":true})"));
  json reply = {
      {"Responses", {{kOperatorTable.name, json::array()}}},
      {"UnprocessedKeys",
       {{kOperatorTable.name, {{"Keys", body["RequestItems"][kOperatorTable.name]["Keys"]}}}}}};
  auto decoded = decode_batch_get(kOperatorTable, reply);
  ASSERT_TRUE(decoded) << decoded.error();
  EXPECT_TRUE(decoded->records.empty());
  EXPECT_EQ(decoded->unprocessed, keys);
  reply["UnprocessedKeys"][kOperatorTable.name]["Keys"] = json::array({json{{"pk", {{"N", "1"}}}}});
  EXPECT_FALSE(decode_batch_get(kOperatorTable, reply)) << "a key we never asked for is malformed";
}

TEST(OperatorCodec, TheDebitedScanFiltersDoneDebitsCompletedInTheWindow) {
  auto body = encode_debited_scan(kOperatorTable, t0, t0 + std::chrono::hours(24), "", 1000);
  ASSERT_TRUE(body);
  EXPECT_EQ((*body)["FilterExpression"],
            "#state = :done AND #status IN (:debited, :unnotified) AND completedAt BETWEEN "
            ":since AND :until");
  EXPECT_EQ((*body)["ExpressionAttributeNames"],
            json::parse(R"({"#state":"state","#status":"status"})"));
  EXPECT_EQ((*body)["Limit"], 1000);
  EXPECT_FALSE(body->contains("IndexName")) << "a Scan of the table";
  EXPECT_FALSE(encode_debited_scan(kOperatorTable, t0, t0, "not a key", 10)) << "a bad cursor";
}

}  // namespace
}  // namespace ic::dynamodb
