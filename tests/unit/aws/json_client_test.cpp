// JsonClient against a scripted transport: protocol headers, signing per attempt, retries,
// quota, ambiguity and clock-skew correction, without a network.
#include "aws/json_client.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <deque>
#include <stop_token>

#include "aws/protocol/reply_checksum.hpp"
#include "event/run_blocking.hpp"
#include "testing/clocks.hpp"
#include "testing/fixed_random.hpp"
#include "testing/scripted_transport.hpp"
#include "testing/static_credentials.hpp"

namespace ic::aws {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;

using testing::ScriptedTransport;
using Step = ScriptedTransport::Step;

std::string header(const http::HttpRequest& request, std::string_view name) {
  for (const auto& [key, value] : request.headers) {
    if (key == name) return value;
  }
  return "<absent>";
}

Step ok(std::string body) {
  return http::HttpResponse{.status = 200, .body = std::move(body)};
}
Step fail(long status, std::string type, http::Headers headers = {}) {
  return http::HttpResponse{
      .status = status,
      .headers = std::move(headers),
      .body = R"({"__type":"com.amazonaws.dynamodb.v20120810#)" + type + R"(","message":"m"})"};
}
Step transport_failure(http::TransportFailure failure) {
  return std::unexpected(http::TransportError{.failure = failure, .detail = "scripted"});
}

// Records each attempt as "service/operation#attempt=result[ retry]".
class RecordingObserver final : public JsonClientObserver {
 public:
  void on_attempt(const AttemptEvent& e) override {
    events.push_back(fmt::format("{}/{}#{}={}{}", e.service, e.operation, e.attempt, e.result,
                                 e.will_retry ? " retry" : ""));
  }
  std::vector<std::string> events;
};

class JsonClientTest : public ::testing::Test {
 protected:
  JsonClient client_for(ScriptedTransport& transport, RetryPolicy& policy,
                        bool verify_crc32 = false) {
    return JsonClient({.service = "dynamodb",
                       .signing_name = "dynamodb",
                       .target_prefix = "DynamoDB_20120810",
                       .endpoint = "http://127.0.0.1:1",
                       .region = "us-east-1",
                       .verify_crc32 = verify_crc32},
                      transport, credentials_, policy,
                      {.clock = clock_,
                       .sleeper = sleeper_,
                       .invocation_id = [] { return std::string("inv-1"); },
                       .observer = &observer_});
  }

  testing::StaticCredentials credentials_{"AKIDEXAMPLE", "secret"};
  // Every reading moves the clock 7 s on, so each signature shows which reading it used.
  testing::ManualClock clock_{Instant{std::chrono::sys_days{std::chrono::January / 1 / 2026}} + 7s,
                              7s};
  testing::RecordingSleeper sleeper_;
  RecordingObserver observer_;
  testing::FixedRandom half_{0.5};
  RetryPolicy policy_{{}, half_};
};

TEST_F(JsonClientTest, SendsAwsJsonProtocolRequest) {
  ScriptedTransport transport({ok(R"({"Item":{"pk":{"S":"a"}}})")});
  auto client = client_for(transport, policy_);
  const auto reply = event::run_blocking(client.call("GetItem", {{"TableName", "t"}}));
  ASSERT_TRUE(reply) << reply.error().code;
  EXPECT_EQ((*reply)["Item"]["pk"]["S"], "a");
  ASSERT_EQ(transport.requests().size(), 1u);
  const auto request = transport.requests().at(0);
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.url, "http://127.0.0.1:1/");
  EXPECT_EQ(request.body, R"({"TableName":"t"})");
  EXPECT_EQ(header(request, "content-type"), "application/x-amz-json-1.0");
  EXPECT_EQ(header(request, "x-amz-target"), "DynamoDB_20120810.GetItem");
  EXPECT_EQ(header(request, "amz-sdk-invocation-id"), "inv-1");
  EXPECT_EQ(header(request, "amz-sdk-request"), "attempt=1; max=3");
  EXPECT_THAT(header(request, "authorization"),
              ::testing::StartsWith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/"
                                    "dynamodb/aws4_request"));
  EXPECT_THAT(observer_.events, ElementsAre("dynamodb/GetItem#1=ok"));
}

TEST_F(JsonClientTest, RetriesServerErrorsAndThrottlingResigningEachAttempt) {
  ScriptedTransport transport({fail(500, "InternalServerError"),
                               fail(400, "ProvisionedThroughputExceededException"), ok("{}")});
  auto client = client_for(transport, policy_);
  ASSERT_TRUE(event::run_blocking(client.call("PutItem", {})));
  ASSERT_EQ(transport.requests().size(), 3u);
  EXPECT_EQ(header(transport.requests()[0], "x-amz-date"), "20260101T000007Z");
  EXPECT_EQ(header(transport.requests()[1], "x-amz-date"), "20260101T000014Z");
  EXPECT_NE(header(transport.requests()[0], "authorization"),
            header(transport.requests()[1], "authorization"));
  EXPECT_EQ(header(transport.requests()[2], "amz-sdk-request"), "attempt=3; max=3");
  EXPECT_EQ(header(transport.requests()[2], "amz-sdk-invocation-id"), "inv-1");
  EXPECT_THAT(sleeper_.sleeps(), ElementsAre(500ms, 1000ms));
  EXPECT_THAT(observer_.events,
              ElementsAre("dynamodb/PutItem#1=InternalServerError retry",
                          "dynamodb/PutItem#2=ProvisionedThroughputExceededException retry",
                          "dynamodb/PutItem#3=ok"));
  EXPECT_EQ(policy_.tokens(), 500 - 5 - 5 + 5);
}

TEST_F(JsonClientTest, DoesNotRetryClientErrors) {
  ScriptedTransport transport({fail(400, "ConditionalCheckFailedException")});
  auto client = client_for(transport, policy_);
  const auto reply = event::run_blocking(client.call("UpdateItem", {}));
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code, "ConditionalCheckFailedException");
  EXPECT_EQ(reply.error().error_class, ErrorClass::Permanent);
  EXPECT_NE(reply.error().response_body.find("ConditionalCheckFailed"), std::string::npos);
  EXPECT_EQ(transport.requests().size(), 1u);
  EXPECT_TRUE(sleeper_.sleeps().empty());
}

TEST_F(JsonClientTest, GivesUpAfterThreeAttempts) {
  ScriptedTransport transport({fail(503, "ServiceUnavailable"), fail(503, "ServiceUnavailable"),
                               fail(503, "ServiceUnavailable")});
  auto client = client_for(transport, policy_);
  const auto reply = event::run_blocking(client.call("GetItem", {}));
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().error_class, ErrorClass::Retryable);
  EXPECT_EQ(transport.requests().size(), 3u);
}

TEST_F(JsonClientTest, TimeoutAfterSendMakesTheFinalErrorAmbiguous) {
  ScriptedTransport transport({transport_failure(http::TransportFailure::TimeoutAfterSend),
                               transport_failure(http::TransportFailure::CouldNotConnect),
                               transport_failure(http::TransportFailure::CouldNotConnect)});
  auto client = client_for(transport, policy_);
  const auto reply = event::run_blocking(client.call("UpdateItem", {}));
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code, "CouldNotConnect");
  EXPECT_TRUE(reply.error().ambiguous);  // the first attempt may have been applied
  EXPECT_EQ(policy_.tokens(), 500 - 10 - 5);
}

TEST_F(JsonClientTest, AStoppedCallIsNotRetriedAndCarriesTheStopToTheTransport) {
  // What a transport answers when the stop cut the transfer short.
  ScriptedTransport transport(
      {transport_failure(http::TransportFailure::Interrupted), ok(R"({})")});
  auto client = client_for(transport, policy_);
  std::stop_source stop;
  stop.request_stop();
  const auto reply = event::run_blocking(client.call("ReceiveMessage", {}, stop.get_token()));
  ASSERT_FALSE(reply);
  ASSERT_EQ(transport.requests().size(), 1u) << "no retry once stopped";
  EXPECT_TRUE(transport.requests()[0].cancel.stop_requested());
  EXPECT_TRUE(sleeper_.sleeps().empty());
  EXPECT_EQ(policy_.tokens(), 500) << "a stop costs no retry quota";
}

TEST_F(JsonClientTest, FailuresThatNeverLeftAreNotAmbiguous) {
  ScriptedTransport transport({transport_failure(http::TransportFailure::CouldNotConnect),
                               transport_failure(http::TransportFailure::TimeoutBeforeSend),
                               transport_failure(http::TransportFailure::CouldNotConnect)});
  auto client = client_for(transport, policy_);
  const auto reply = event::run_blocking(client.call("UpdateItem", {}));
  ASSERT_FALSE(reply);
  EXPECT_FALSE(reply.error().ambiguous);
}

TEST_F(JsonClientTest, EmptyQuotaStopsRetrying) {
  RetryPolicy poor({.initial_tokens = 4}, half_);
  ScriptedTransport transport({fail(500, "InternalServerError")});
  auto client = client_for(transport, poor);
  ASSERT_FALSE(event::run_blocking(client.call("GetItem", {})));
  EXPECT_EQ(transport.requests().size(), 1u);
  EXPECT_THAT(observer_.events, ElementsAre("dynamodb/GetItem#1=InternalServerError"));
}

TEST_F(JsonClientTest, CorrectsClockSkewFromTheDateHeaderAndRetries) {
  ScriptedTransport transport(
      {http::HttpResponse{.status = 400,
                          .headers = {{"date", "Thu, 01 Jan 2026 01:00:07 GMT"}},
                          .body =
                              R"({"__type":"com.amazon.coral.service#InvalidSignatureException",)"
                              R"("message":"Signature expired: 20260101T000007Z is now earlier"})"},
       ok("{}")});
  auto client = client_for(transport, policy_);
  ASSERT_TRUE(event::run_blocking(client.call("GetItem", {})));
  // The server's clock is one hour ahead of ours (we read 00:00:14 when the reply arrived,
  // the server said 01:00:07): the second attempt is signed in server time.
  EXPECT_EQ(client.clock_skew(), 1h - 7s);
  EXPECT_EQ(header(transport.requests()[1], "x-amz-date"), "20260101T010014Z");
}

TEST_F(JsonClientTest, MalformedSuccessReplyIsAmbiguous) {
  ScriptedTransport transport({ok("{not json"), ok("{not json"), ok("{not json")});
  auto client = client_for(transport, policy_);
  const auto reply = event::run_blocking(client.call("UpdateItem", {}));
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code, "MalformedResponse");
  EXPECT_TRUE(reply.error().ambiguous);
}

// The signer cannot split "not a url"; the client answers with an error value instead of
// letting the signer throw on whatever thread made the call.
TEST_F(JsonClientTest, AnEndpointThatIsNotAUrlIsAPermanentErrorNotAnException) {
  ScriptedTransport transport({ok("{}")});
  JsonClient client({.service = "sqs",
                     .signing_name = "sqs",
                     .target_prefix = "AmazonSQS",
                     .endpoint = "not a url",
                     .region = "us-east-1"},
                    transport, credentials_, policy_, {.clock = clock_, .sleeper = sleeper_});
  const auto reply = event::run_blocking(client.call("ReceiveMessage", {}));
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code, "InvalidEndpoint");
  EXPECT_EQ(reply.error().error_class, ErrorClass::Permanent);
  EXPECT_TRUE(transport.requests().empty());
}

// A reply with x-amz-crc32 set to `crc` (a decimal uint32 as DynamoDB writes it).
Step with_crc(long status, std::string body, std::string crc) {
  return http::HttpResponse{
      .status = status, .headers = {{"x-amz-crc32", std::move(crc)}}, .body = std::move(body)};
}
std::string crc_text(std::string_view body) {
  return std::to_string(crc32_of(body));
}

TEST_F(JsonClientTest, AReplyWhoseCrc32MismatchesIsRetriedAndTheGoodReplyReturned) {
  const std::string good = R"({"Attributes":{"pk":{"S":"a"}}})";
  ScriptedTransport transport(
      {with_crc(200, good, crc_text(good) + "1"), with_crc(200, good, crc_text(good))});
  auto client = client_for(transport, policy_, /*verify_crc32=*/true);
  const auto reply = event::run_blocking(client.call("UpdateItem", {}));
  ASSERT_TRUE(reply) << reply.error().code;
  EXPECT_EQ((*reply)["Attributes"]["pk"]["S"], "a");
  EXPECT_THAT(observer_.events, ElementsAre("dynamodb/UpdateItem#1=CRC32CheckFailed retry",
                                            "dynamodb/UpdateItem#2=ok"));
}

TEST_F(JsonClientTest, PersistentCrc32MismatchEndsRetryableAndAmbiguous) {
  // The body parses as valid JSON: only the checksum tells it was damaged on the way.
  ScriptedTransport transport(
      {with_crc(200, "{}", "12345"), with_crc(200, "{}", "12345"), with_crc(200, "{}", "12345")});
  auto client = client_for(transport, policy_, /*verify_crc32=*/true);
  const auto reply = event::run_blocking(client.call("PutItem", {}));
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code, "CRC32CheckFailed");
  EXPECT_EQ(reply.error().error_class, ErrorClass::Retryable);
  EXPECT_TRUE(reply.error().ambiguous);
  EXPECT_EQ(reply.error().http_status, 200);
  EXPECT_EQ(transport.requests().size(), 3u);
}

TEST_F(JsonClientTest, ADamagedErrorReplyIsNotReadAsItsPermanentError) {
  const std::string conditional =
      R"({"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"})";
  ScriptedTransport transport({with_crc(400, conditional, "not-a-number"), ok("{}")});
  auto client = client_for(transport, policy_, /*verify_crc32=*/true);
  ASSERT_TRUE(event::run_blocking(client.call("PutItem", {})));
  EXPECT_THAT(observer_.events,
              ElementsAre("dynamodb/PutItem#1=CRC32CheckFailed retry", "dynamodb/PutItem#2=ok"));
}

TEST_F(JsonClientTest, AMatchingOrAbsentCrc32IsAcceptedAndOffMeansUnchecked) {
  const std::string conditional =
      R"({"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException"})";
  ScriptedTransport checked({with_crc(400, conditional, crc_text(conditional)), ok("{}")});
  auto client = client_for(checked, policy_, /*verify_crc32=*/true);
  const auto refused = event::run_blocking(client.call("PutItem", {}));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "ConditionalCheckFailedException");
  ASSERT_TRUE(event::run_blocking(client.call("GetItem", {})));  // no header: accepted

  ScriptedTransport unchecked({with_crc(200, "{}", "1")});
  auto sqs_like = client_for(unchecked, policy_, /*verify_crc32=*/false);
  EXPECT_TRUE(event::run_blocking(sqs_like.call("GetItem", {})));
}

}  // namespace
}  // namespace ic::aws
