// The quarantine record's wire form (docs/design.md §3 "Quarantine records"): its key, the
// attributes of the put, TTL, and the decoding of GetItem replies.
#include "adapters/dynamodb/quarantine_store.hpp"

#include <gtest/gtest.h>

namespace ic::dynamodb {
namespace {

using nlohmann::json;

const TableSpec kQuarantineTable{.name = "charges", .retention = std::chrono::seconds{86400}};

consumer::QuarantineRecord record() {
  return {.body_sha256 = std::string(64, 'a'),
          .failure_reason = "INVALID_MESSAGE",
          .failure_detail = "body: must be JSON",
          .source_message_id = "m-1",
          .at = Instant{Millis{1'700'000'000'000}}};
}

TEST(QuarantineCodec, PutWritesTheRecordUnderAKeyNoChargeIdCanTake) {
  const json put = encode_quarantine_put(kQuarantineTable, record());
  EXPECT_EQ(put["TableName"], "charges");
  EXPECT_EQ(put["Key"],
            json::parse(R"({"pk":{"S":"quarantine#)" + std::string(64, 'a') + R"("}})"));
  EXPECT_EQ(put["UpdateExpression"],
            "SET recordType = :t, failureReason = :r, sourceMessageId = :m, bodySha256 = :h, "
            "quarantinedAt = :at, expiresAt = :x, failureDetail = :d");
  const json& values = put["ExpressionAttributeValues"];
  EXPECT_EQ(values[":t"]["S"], "QUARANTINE");
  EXPECT_EQ(values[":r"]["S"], "INVALID_MESSAGE");
  EXPECT_EQ(values[":d"]["S"], "body: must be JSON");
  EXPECT_EQ(values[":at"]["N"], "1700000000000");
  EXPECT_EQ(values[":x"]["N"], "1700086400") << "epoch seconds, write time + retention";
}

TEST(QuarantineCodec, AnEmptyDetailIsRemovedNotWritten) {
  auto without = record();
  without.failure_detail.clear();
  const json put = encode_quarantine_put(kQuarantineTable, without);
  EXPECT_FALSE(put["ExpressionAttributeValues"].contains(":d"));
  EXPECT_TRUE(put["UpdateExpression"].get<std::string>().ends_with(" REMOVE failureDetail"));
}

TEST(QuarantineCodec, GetIsConsistentAndDecodesWhatPutWrote) {
  const json get = encode_quarantine_get(kQuarantineTable, std::string(64, 'a'));
  EXPECT_EQ(get["ConsistentRead"], true);
  EXPECT_EQ(get["Key"]["pk"]["S"], "quarantine#" + std::string(64, 'a'));

  // The item as DynamoDB would hold it after the put.
  const json put = encode_quarantine_put(kQuarantineTable, record());
  json item = {{"pk", put["Key"]["pk"]}};
  const std::pair<const char*, const char*> names[] = {
      {"recordType", ":t"}, {"failureReason", ":r"},  {"sourceMessageId", ":m"},
      {"bodySha256", ":h"}, {"quarantinedAt", ":at"}, {"failureDetail", ":d"}};
  for (const auto& [name, value] : names) item[name] = put["ExpressionAttributeValues"][value];
  auto decoded = decode_quarantine_get({{"Item", item}});
  ASSERT_TRUE(decoded) << decoded.error();
  ASSERT_TRUE(decoded->has_value());
  EXPECT_EQ(**decoded, record());
}

TEST(QuarantineCodec, NoItemIsNoRecordAndAForeignItemIsAnError) {
  auto none = decode_quarantine_get(json::object());
  ASSERT_TRUE(none);
  EXPECT_FALSE(none->has_value());
  EXPECT_FALSE(decode_quarantine_get({{"Item", {{"pk", {{"S", "CHG-1"}}}}}}));
  EXPECT_FALSE(decode_quarantine_get(
      {{"Item", {{"recordType", {{"S", "QUARANTINE"}}}, {"bodySha256", {{"S", "x"}}}}}}))
      << "failureReason missing";
  EXPECT_FALSE(decode_quarantine_get(json::array()));
}

}  // namespace
}  // namespace ic::dynamodb
