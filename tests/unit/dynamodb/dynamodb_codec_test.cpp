// The DynamoDB request bodies carry docs/design.md §3's expressions exactly, and items decode
// into ClaimRecords (or a reason why not). No network.
#include "adapters/dynamodb/dynamodb_codec.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "idempotency/own_write.hpp"
#include "testing/clocks.hpp"

namespace ic::dynamodb {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

using testing::t0;
const TableSpec kTable{
    .name = "idem", .retention = std::chrono::hours(24), .result_attribute = "debitRef"};

idempotency::ClaimRequest request() {
  return {.key = "CHG-1",
          .payload_hash = "h1",
          .token = "tok",
          .owner = "host/1",
          .now = t0,
          .lease = 60s};
}

TEST(DynamoDbCodec, ClaimIsAConditionalUpsertThatCountsTheFence) {
  const json body = json::parse(encode_claim(kTable, request()));
  EXPECT_EQ(body["TableName"], "idem");
  EXPECT_EQ(body["Key"], json::parse(R"({"pk":{"S":"CHG-1"}})"));
  EXPECT_EQ(body["ConditionExpression"],
            "attribute_not_exists(pk) OR (#state = :inprogress AND payloadHash = :h AND "
            "(leaseUntil < :now OR claimToken = :token))");
  const std::string update = body["UpdateExpression"];
  EXPECT_THAT(update, ::testing::HasSubstr("ADD fence :one"));
  EXPECT_THAT(update, ::testing::HasSubstr("createdAt = if_not_exists(createdAt, :now)"));
  // The bank's window counts from the first claim; a later claim keeps it (design.md §3).
  EXPECT_THAT(update, ::testing::HasSubstr("firstAttemptAt = if_not_exists(firstAttemptAt, :now)"));
  EXPECT_THAT(update, ::testing::HasSubstr("#owner = :owner"));
  EXPECT_EQ(body["ExpressionAttributeNames"],
            json::parse(R"({"#state":"state","#owner":"owner"})"));
  const json& values = body["ExpressionAttributeValues"];
  EXPECT_EQ(values[":inprogress"], json::parse(R"({"S":"IN_PROGRESS"})"));
  EXPECT_EQ(values[":now"], json::parse(R"({"N":"1764460800000"})"));
  EXPECT_EQ(values[":lease"], json::parse(R"({"N":"1764460860000"})"));
  EXPECT_EQ(values[":exp"], json::parse(R"({"N":"1764547200"})"));  // seconds, now + 24 h
  EXPECT_EQ(values[":one"], json::parse(R"({"N":"1"})"));
  EXPECT_EQ(body["ReturnValues"], "ALL_NEW");
  EXPECT_EQ(body["ReturnValuesOnConditionCheckFailure"], "ALL_OLD");
}

TEST(DynamoDbCodec, FinalWriteIsConditionedOnTheHolderAndRefreshesExpiry) {
  const json body = json::parse(encode_final(kTable, "CHG-1", "tok",
                                             {.state = idempotency::ClaimState::Done,
                                              .status = "DEBITED",
                                              .result_ref = "DBT-1",
                                              .now = t0 + 5s}));
  EXPECT_EQ(body["ConditionExpression"], "#state = :inprogress AND claimToken = :token");
  EXPECT_EQ(body["UpdateExpression"],
            "SET #state = :final, #status = :status, updatedAt = :now, completedAt = :now, "
            "expiresAt = :exp, #result = :ref");
  EXPECT_EQ(body["ExpressionAttributeNames"],
            json::parse(R"({"#state":"state","#status":"status","#result":"debitRef"})"));
  EXPECT_EQ(body["ExpressionAttributeValues"][":ref"], json::parse(R"({"S":"DBT-1"})"));
  EXPECT_EQ(body["ExpressionAttributeValues"][":final"], json::parse(R"({"S":"DONE"})"));
  EXPECT_EQ(body["ExpressionAttributeValues"][":token"], json::parse(R"({"S":"tok"})"));
  EXPECT_EQ(body["ExpressionAttributeValues"][":exp"], json::parse(R"({"N":"1764547205"})"));
  EXPECT_EQ(body["ReturnValuesOnConditionCheckFailure"], "ALL_OLD");

  const json failed = json::parse(encode_final(kTable, "CHG-1", "tok",
                                               {.state = idempotency::ClaimState::Failed,
                                                .status = "FAILED_PERMANENT",
                                                .failure_reason = "ACCOUNT_CLOSED",
                                                .now = t0}));
  EXPECT_THAT(failed["UpdateExpression"].get<std::string>(),
              ::testing::EndsWith(", failureReason = :reason"));
  EXPECT_FALSE(failed["ExpressionAttributeNames"].contains("#result"));
  EXPECT_EQ(failed["ExpressionAttributeValues"][":final"], json::parse(R"({"S":"FAILED"})"));
}

TEST(DynamoDbCodec, LeaseWritesAndReads) {
  const json release = json::parse(encode_set_lease(kTable, "CHG-1", "tok", Instant{}));
  EXPECT_EQ(release["UpdateExpression"], "SET leaseUntil = :lease");
  EXPECT_EQ(release["ExpressionAttributeValues"][":lease"], json::parse(R"({"N":"0"})"));
  EXPECT_EQ(
      json::parse(encode_get(kTable, "CHG-1")),
      json::parse(R"({"TableName":"idem","Key":{"pk":{"S":"CHG-1"}},"ConsistentRead":true})"));
}

// The bodies are written as text, not dumped from a document: whatever the strings in them,
// each is one JSON document and its values are the request's own.
RC_GTEST_PROP(DynamoDbCodecProperty, BodiesCarryTheirValuesVerbatim, ()) {
  const auto text = [] {
    return *rc::gen::container<std::string>(rc::gen::inRange<char>(0x01, 0x7f));
  };
  const idempotency::ClaimRequest claim{.key = text(),
                                        .payload_hash = text(),
                                        .token = text(),
                                        .owner = text(),
                                        .now = t0,
                                        .lease = 60s};
  const TableSpec table{.name = text(), .result_attribute = text()};
  const json body = json::parse(encode_claim(table, claim));
  RC_ASSERT(body["TableName"] == table.name);
  RC_ASSERT(body["Key"]["pk"]["S"] == claim.key);
  const json& values = body["ExpressionAttributeValues"];
  RC_ASSERT(values[":token"]["S"] == claim.token);
  RC_ASSERT(values[":owner"]["S"] == claim.owner);
  RC_ASSERT(values[":h"]["S"] == claim.payload_hash);

  const std::string status = text(), reason = text(), ref = text(), payload = text();
  const json final_write = json::parse(encode_final(table, claim.key, claim.token,
                                                    {.state = idempotency::ClaimState::Failed,
                                                     .status = status,
                                                     .failure_reason = reason,
                                                     .result_ref = ref,
                                                     .payload = payload,
                                                     .now = t0}));
  const json& final_values = final_write["ExpressionAttributeValues"];
  RC_ASSERT(final_values[":status"]["S"] == status);
  RC_ASSERT(final_values.contains(":reason") == !reason.empty());
  if (!reason.empty()) RC_ASSERT(final_values[":reason"]["S"] == reason);
  if (!ref.empty())
    RC_ASSERT(final_write["ExpressionAttributeNames"]["#result"] == table.result_attribute);
  if (!payload.empty()) RC_ASSERT(final_values[":payload"]["S"] == payload);  // FAILED keeps it
  RC_ASSERT(final_values[":token"]["S"] == claim.token);
}

const char* const kDoneItem = R"({
  "pk":{"S":"CHG-1"},"state":{"S":"DONE"},"leaseUntil":{"N":"1764460860000"},
  "claimToken":{"S":"tok"},"fence":{"N":"2"},"owner":{"S":"host/1"},"payloadHash":{"S":"h1"},
  "status":{"S":"DEBITED"},"debitRef":{"S":"DBT-1"},"createdAt":{"N":"1764460800000"},
  "updatedAt":{"N":"1764460805000"},"completedAt":{"N":"1764460805000"},
  "expiresAt":{"N":"1764547205"}})";

TEST(DynamoDbCodec, DecodesEveryAttribute) {
  const auto record = decode_record(kTable, json::parse(kDoneItem));
  ASSERT_TRUE(record) << record.error();
  EXPECT_EQ(record->key, "CHG-1");
  EXPECT_EQ(record->state, idempotency::ClaimState::Done);
  EXPECT_EQ(record->lease_until, t0 + 60s);
  EXPECT_EQ(record->claim_token, "tok");
  EXPECT_EQ(record->fence, 2);
  EXPECT_EQ(record->owner, "host/1");
  EXPECT_EQ(record->payload_hash, "h1");
  EXPECT_EQ(record->status, "DEBITED");
  EXPECT_EQ(record->result_ref, "DBT-1");
  EXPECT_EQ(record->failure_reason, "");
  EXPECT_EQ(record->created_at, t0);
  EXPECT_EQ(record->updated_at, t0 + 5s);
  EXPECT_EQ(record->completed_at, t0 + 5s);
  EXPECT_EQ(record->expires_at_epoch_seconds, 1764547205);
}

TEST(DynamoDbCodec, DecodesTheFirstAttemptWhenPresent) {
  const auto with =
      decode_record(kTable, json::parse(R"({"pk":{"S":"k"},"state":{"S":"IN_PROGRESS"},
      "firstAttemptAt":{"N":"1764460800000"},"updatedAt":{"N":"1764460900000"}})"));
  ASSERT_TRUE(with);
  EXPECT_EQ(with->first_attempt_at, Instant{Millis{1764460800000}});
  EXPECT_TRUE(with->earlier_effect_possible());
  const auto without =
      decode_record(kTable, json::parse(R"({"pk":{"S":"k"},"state":{"S":"DONE"}})"));
  ASSERT_TRUE(without);
  EXPECT_FALSE(without->first_attempt_at.has_value()) << "a record from before the attribute";
}

TEST(DynamoDbCodec, TheResultAttributeIsTheTableSpecs) {
  const TableSpec generic{.name = "idem"};
  const json body = json::parse(encode_final(generic, "CHG-1", "tok",
                                             {.state = idempotency::ClaimState::Done,
                                              .status = "DONE_OK",
                                              .result_ref = "REF-1",
                                              .now = t0}));
  EXPECT_EQ(body["ExpressionAttributeNames"]["#result"], "resultRef");
  const auto record = decode_record(
      generic, json::parse(R"({"pk":{"S":"k"},"state":{"S":"DONE"},"resultRef":{"S":"REF-1"},)"
                           R"("debitRef":{"S":"not ours"}})"));
  ASSERT_TRUE(record) << record.error();
  EXPECT_EQ(record->result_ref, "REF-1");
}

TEST(DynamoDbCodec, RejectsMalformedItems) {
  EXPECT_FALSE(decode_record(kTable, json::parse(R"({"state":{"S":"DONE"}})")));
  EXPECT_FALSE(decode_record(kTable, json::parse(R"({"pk":{"S":"k"},"state":{"S":"MAYBE"}})")));
  EXPECT_FALSE(decode_record(
      kTable, json::parse(R"({"pk":{"S":"k"},"state":{"S":"DONE"},"fence":{"S":"1"}})")));
  EXPECT_FALSE(decode_record(
      kTable, json::parse(R"({"pk":{"S":"k"},"state":{"S":"DONE"},"fence":{"N":"1.5"}})")));
  EXPECT_FALSE(decode_record(kTable, json::parse(R"({"pk":{"N":"1"},"state":{"S":"DONE"}})")));
  EXPECT_FALSE(decode_record(kTable, json::parse(R"({"pk":{"S":"k"},"state":{"S":"DONE"},)"
                                                 R"("debitRef":{"N":"1"}})")));
  EXPECT_FALSE(decode_record(kTable, json::array()));
}

TEST(DynamoDbCodec, OldItemComesFromTheConditionalCheckFailure) {
  const std::string body =
      std::string(R"({"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",)"
                  R"("message":"The conditional request failed","Item":)") +
      kDoneItem + "}";
  const auto item = old_item_from_error_body(body);
  ASSERT_TRUE(item);
  EXPECT_EQ((*item)["pk"]["S"], "CHG-1");
  EXPECT_FALSE(
      old_item_from_error_body(R"({"__type":"x#ConditionalCheckFailedException","message":"m"})"));
  EXPECT_FALSE(old_item_from_error_body("not json"));
}

TEST(DynamoDbCodec, OwnFinalWriteNeedsSameStateTokenAndStatus) {
  const auto record = *decode_record(kTable, json::parse(kDoneItem));
  using idempotency::ClaimState;
  using idempotency::is_own_final_write;
  EXPECT_TRUE(is_own_final_write(record, "tok", ClaimState::Done, "DEBITED"));
  EXPECT_FALSE(is_own_final_write(record, "other", ClaimState::Done, "DEBITED"));
  EXPECT_FALSE(is_own_final_write(record, "tok", ClaimState::Failed, "DEBITED"));
  EXPECT_FALSE(is_own_final_write(record, "tok", ClaimState::Done, "DEBITED_NOTIFICATION_FAILED"));
}

}  // namespace
}  // namespace ic::dynamodb
