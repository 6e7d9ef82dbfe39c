// Provisioning paths moto does not take: a table that is still CREATING, a deadline that
// passes, TTL enabled by someone else in between, and endpoints without TTL. No network.
#include "adapters/dynamodb/table_provisioner.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>

#include "testing/clocks.hpp"
#include "testing/fixed_random.hpp"
#include "testing/no_sleep.hpp"
#include "testing/static_credentials.hpp"

namespace ic::dynamodb {
namespace {

using namespace std::chrono_literals;

// Answers each request with the next scripted (status, body) and records the operations.
class ScriptedDynamoDb final : public http::AsyncHttpTransport {
 public:
  explicit ScriptedDynamoDb(std::deque<std::pair<long, std::string>> script)
      : script_(std::move(script)) {}
  Task<http::HttpResult> send(const http::HttpRequest& request,
                              const http::HttpTimeouts&) override {
    for (const auto& [name, value] : request.headers) {
      if (name == "x-amz-target") operations.push_back(value.substr(value.find('.') + 1));
    }
    bodies.push_back(request.body);
    auto [status, body] = script_.front();
    script_.pop_front();
    co_return http::HttpResponse{.status = status, .headers = {}, .body = body};
  }
  std::vector<std::string> operations;
  std::vector<std::string> bodies;

 private:
  std::deque<std::pair<long, std::string>> script_;
};

std::pair<long, std::string> error(std::string type, std::string message) {
  return {400, R"({"__type":"com.amazonaws.dynamodb.v20120810#)" + type + R"(","message":")" +
                   message + R"("})"};
}
std::pair<long, std::string> table(std::string status) {
  return {200, R"({"Table":{"TableStatus":")" + status + R"("}})"};
}
const std::pair<long, std::string> kCreated{200, R"({"TableDescription":{}})"};
const std::pair<long, std::string> kTtlDisabled{
    200, R"({"TimeToLiveDescription":{"TimeToLiveStatus":"DISABLED"}})"};

class TableProvisionerTest : public ::testing::Test {
 protected:
  std::expected<ProvisionReport, Error> provision(ScriptedDynamoDb& transport) {
    aws::JsonClient client({.service = "dynamodb",
                            .signing_name = "dynamodb",
                            .target_prefix = "DynamoDB_20120810",
                            .endpoint = "http://127.0.0.1:1",
                            .region = "us-east-1"},
                           transport, credentials_, retry_, {.sleeper = no_sleep_});
    return provision_table(
        client, "idem",
        {.active_timeout = 2s, .poll_interval = 500ms, .clock = clock_, .sleeper = sleeper_});
  }
  testing::StaticCredentials credentials_{"AKID", "secret"};
  testing::FixedRandom zero_{0.0};
  aws::RetryPolicy retry_{{}, zero_};
  testing::NoSleep no_sleep_;
  // Time passes only while the provisioner sleeps.
  testing::ManualClock clock_{Instant{}};
  testing::RecordingSleeper sleeper_{clock_};
};

TEST_F(TableProvisionerTest, WaitsForActiveThenEnablesTtl) {
  ScriptedDynamoDb dynamodb(
      {kCreated, table("CREATING"), table("CREATING"), table("ACTIVE"), kTtlDisabled, {200, "{}"}});
  const auto report = provision(dynamodb);
  ASSERT_TRUE(report) << report.error().code;
  EXPECT_TRUE(report->created);
  EXPECT_TRUE(report->ttl_enabled);
  EXPECT_THAT(dynamodb.operations,
              ::testing::ElementsAre("CreateTable", "DescribeTable", "DescribeTable",
                                     "DescribeTable", "DescribeTimeToLive", "UpdateTimeToLive"));
  EXPECT_EQ(clock_.now().time_since_epoch(), 1000ms);
}

TEST_F(TableProvisionerTest, GivesUpAtTheDeadline) {
  std::deque<std::pair<long, std::string>> script{kCreated};
  for (int i = 0; i < 10; ++i) script.push_back(table("CREATING"));
  ScriptedDynamoDb dynamodb(std::move(script));
  const auto report = provision(dynamodb);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code, "TableNotActive");
  EXPECT_EQ(report.error().error_class, ErrorClass::Retryable);
}

TEST_F(TableProvisionerTest, ExistingTableAndConcurrentlyEnabledTtlAreFine) {
  ScriptedDynamoDb dynamodb({error("ResourceInUseException", "Table already exists: idem"),
                             table("ACTIVE"), kTtlDisabled,
                             error("ValidationException", "TimeToLive is already enabled")});
  const auto report = provision(dynamodb);
  ASSERT_TRUE(report) << report.error().code;
  EXPECT_FALSE(report->created);
  EXPECT_TRUE(report->ttl_enabled);
}

TEST_F(TableProvisionerTest, TtlOnAnotherAttributeIsRefused) {
  ScriptedDynamoDb dynamodb(
      {kCreated,
       table("ACTIVE"),
       {200, R"({"TimeToLiveDescription":{"TimeToLiveStatus":"ENABLED","AttributeName":"ttl"}})"}});
  const auto report = provision(dynamodb);
  ASSERT_FALSE(report);
  EXPECT_EQ(report.error().code, "TtlOnOtherAttribute");
  EXPECT_EQ(report.error().error_class, ErrorClass::Permanent);
}

TEST_F(TableProvisionerTest, EndpointWithoutTtlStillProvisions) {
  ScriptedDynamoDb dynamodb(
      {kCreated, table("ACTIVE"), error("UnknownOperationException", "not supported")});
  const auto report = provision(dynamodb);
  ASSERT_TRUE(report) << report.error().code;
  EXPECT_FALSE(report->ttl_enabled);
}

TEST_F(TableProvisionerTest, CreatesTheSparseAttentionIndexAndReportsIt) {
  const std::pair<long, std::string> indexed{
      200,
      R"({"Table":{"TableStatus":"ACTIVE","GlobalSecondaryIndexes":[{"IndexName":"attention-index"}]}})"};
  ScriptedDynamoDb dynamodb({kCreated, indexed, kTtlDisabled, {200, "{}"}});
  const auto report = provision(dynamodb);
  ASSERT_TRUE(report) << report.error().code;
  EXPECT_TRUE(report->attention_index);
  const auto create = nlohmann::json::parse(dynamodb.bodies.front());
  EXPECT_EQ(create["GlobalSecondaryIndexes"], nlohmann::json::parse(R"([{
      "IndexName": "attention-index",
      "KeySchema": [{"AttributeName": "attention", "KeyType": "HASH"},
                    {"AttributeName": "attentionAt", "KeyType": "RANGE"}],
      "Projection": {"ProjectionType": "ALL"}}])"));
  EXPECT_EQ(create["AttributeDefinitions"], nlohmann::json::parse(R"([
      {"AttributeName": "pk", "AttributeType": "S"},
      {"AttributeName": "attention", "AttributeType": "S"},
      {"AttributeName": "attentionAt", "AttributeType": "N"}])"));
}

TEST_F(TableProvisionerTest, AnOlderTableWithoutTheIndexIsReported) {
  ScriptedDynamoDb dynamodb({error("ResourceInUseException", "Table already exists: idem"),
                             table("ACTIVE"),
                             kTtlDisabled,
                             {200, "{}"}});
  const auto report = provision(dynamodb);
  ASSERT_TRUE(report) << report.error().code;
  EXPECT_FALSE(report->attention_index);
}

}  // namespace
}  // namespace ic::dynamodb
