// Replies of unexpected shape, through the store and the provisioner over a scripted
// transport: a 2xx that is JSON but not the object expected is an error value, never an
// exception, and a write answered that way is flagged as one that may have taken effect.
#include <gtest/gtest.h>

#include "adapters/dynamodb/dynamodb_store.hpp"
#include "adapters/dynamodb/table_provisioner.hpp"
#include "event/run_blocking.hpp"
#include "testing/no_sleep.hpp"
#include "testing/scripted_transport.hpp"
#include "testing/static_credentials.hpp"

namespace ic::dynamodb {
namespace {

using namespace std::chrono_literals;
using testing::ScriptedTransport;

ScriptedTransport::Step ok(std::string body) {
  return http::HttpResponse{.status = 200, .body = std::move(body)};
}

// Enough copies of one reply for every attempt of every round.
std::deque<ScriptedTransport::Step> answering(const std::string& body, int times = 6) {
  std::deque<ScriptedTransport::Step> script;
  for (int i = 0; i < times; ++i) script.push_back(ok(body));
  return script;
}

struct Wiring {
  explicit Wiring(std::deque<ScriptedTransport::Step> script)
      : transport(std::move(script)),
        client({.service = "dynamodb",
                .signing_name = "dynamodb",
                .target_prefix = "DynamoDB_20120810",
                .endpoint = "http://127.0.0.1:1",
                .region = "us-east-1"},
               transport, credentials, retry, {.sleeper = no_sleep}),
        store(client, {.name = "idempotency"}) {}

  ScriptedTransport transport;
  testing::StaticCredentials credentials{"AKID", "s"};
  testing::NoSleep no_sleep;
  aws::RetryPolicy retry{aws::RetryConfig{}};
  aws::JsonClient client;
  DynamoDbIdempotencyStore store;
};

const idempotency::ClaimRequest kClaim{
    .key = "CHG-1", .payload_hash = "h", .token = "t", .owner = "w", .now = {}, .lease = 60s};

TEST(DynamoDbReplyShapes, AClaimAnsweredWithJsonThatIsNotAnObjectIsAmbiguousNotThrown) {
  for (const char* body : {"[]", R"("x")", "1", "null", "true"}) {
    Wiring wiring(answering(body));
    const auto claim = event::run_blocking(wiring.store.claim(kClaim));
    ASSERT_FALSE(claim) << body;
    EXPECT_EQ(claim.error().code, "MalformedResponse") << body;
    EXPECT_TRUE(claim.error().ambiguous) << body;
    EXPECT_TRUE(claim.error().retryable()) << body;
  }
}

TEST(DynamoDbReplyShapes, AClaimWhoseAttributesAreUnreadableIsAmbiguous) {
  for (const char* body : {R"({"Attributes":"x"})", R"({"Attributes":[1]})", "{}"}) {
    Wiring wiring(answering(body, 1));
    const auto claim = event::run_blocking(wiring.store.claim(kClaim));
    ASSERT_FALSE(claim) << body;
    EXPECT_EQ(claim.error().code, "MalformedResponse") << body;
    EXPECT_TRUE(claim.error().ambiguous) << body;
  }
}

TEST(DynamoDbReplyShapes, EveryOtherStoreCallAnswersAnErrorValue) {
  for (const char* body : {"[]", "1", "null"}) {
    Wiring wiring(answering(body, 30));
    EXPECT_FALSE(event::run_blocking(wiring.store.get("CHG-1"))) << body;
    EXPECT_FALSE(
        event::run_blocking(wiring.store.complete("CHG-1", "t", {.status = "DEBITED"}, {})))
        << body;
    EXPECT_FALSE(event::run_blocking(
        wiring.store.fail("CHG-1", "t", {.status = "FAILED", .reason = "R"}, {})))
        << body;
    EXPECT_FALSE(event::run_blocking(wiring.store.extend("CHG-1", "t", {}))) << body;
    EXPECT_FALSE(event::run_blocking(wiring.store.release("CHG-1", "t"))) << body;
  }
  Wiring odd_item(answering(R"({"Item":[1]})", 1));
  EXPECT_FALSE(event::run_blocking(odd_item.store.get("CHG-1")));
}

TEST(DynamoDbReplyShapes, ProvisioningReadsOddShapesAsAnUnknownStatus) {
  testing::NoSleep no_sleep;
  const ProvisionOptions options{.active_timeout = 0ms, .clock = real_clock(), .sleeper = no_sleep};
  // TableStatus under a string, then TTL fields of the wrong type: no exception, a status
  // that is not ACTIVE, then a TTL that is not known to be enabled.
  Wiring not_active({ok("{}"), ok(R"({"Table":"ACTIVE"})")});
  const auto refused = provision_table(not_active.client, "idempotency", options);
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "TableNotActive");

  Wiring odd_ttl(
      {ok("{}"), ok(R"({"Table":{"TableStatus":"ACTIVE"}})"),
       ok(R"({"TimeToLiveDescription":{"TimeToLiveStatus":1,"AttributeName":["expiresAt"]}})"),
       ok("{}")});
  const auto provisioned = provision_table(odd_ttl.client, "idempotency", options);
  ASSERT_TRUE(provisioned) << provisioned.error().message;
  EXPECT_TRUE(provisioned->ttl_enabled) << "the TTL was enabled by UpdateTimeToLive";
}

}  // namespace
}  // namespace ic::dynamodb
