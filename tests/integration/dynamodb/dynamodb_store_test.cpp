// The DynamoDB store against moto over real HTTP: the shared store contract, provisioning,
// the GetItem fallback, ambiguous (lost) responses, and error mapping.
#include "adapters/dynamodb/dynamodb_store.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <functional>

#include "adapters/dynamodb/table_provisioner.hpp"
#include "event/run_blocking.hpp"
#include "http/forwarding_transport.hpp"
#include "testing/backend_fixture.hpp"
#include "testing/clocks.hpp"
#include "testing/moto_fixture.hpp"
#include "testing/scripted_transport.hpp"
#include "testing/store_contract.hpp"

namespace ic::dynamodb {
namespace {

using namespace std::chrono_literals;
using event::run_blocking;
using idempotency::ClaimOutcome;
using idempotency::WriteOutcome;
using testing::DynamoDbWiring;
using testing::kTable;
using testing::shared_backend;

// An empty moto with a provisioned table, and a store over it, owned together.
struct MotoStore {
  explicit MotoStore(http::AsyncHttpTransport* transport = nullptr,
                     std::chrono::seconds retention = testing::kContractRetention)
      : wiring(reset_moto(), "AKIDTEST", "secret", transport),
        store(wiring.client, {.name = kTable, .retention = retention}) {
    auto provisioned = provision_table(wiring.client, kTable, {});
    if (!provisioned) throw std::runtime_error("provisioning failed: " + provisioned.error().code);
  }
  static const std::string& reset_moto() {
    if (!shared_backend().reset()) throw std::runtime_error("moto reset failed");
    return shared_backend().endpoint();
  }
  DynamoDbWiring wiring;
  DynamoDbIdempotencyStore store;
};

std::shared_ptr<idempotency::IdempotencyStore> make_moto_store() {
  auto owner = std::make_shared<MotoStore>();
  return std::shared_ptr<idempotency::IdempotencyStore>(owner, &owner->store);
}

using testing::StoreContract;
INSTANTIATE_TEST_SUITE_P(DynamoDb, StoreContract,
                         ::testing::Values(testing::StoreUnderTest{"dynamodb", make_moto_store}));

using testing::t0;
using testing::target_of;

idempotency::ClaimRequest request(std::string token, Instant now, std::string hash = "hash-a") {
  return {.key = "CHG-1",
          .payload_hash = std::move(hash),
          .token = std::move(token),
          .owner = "test",
          .now = now,
          .lease = 10s};
}

// Forwards to curl and rewrites what comes back, to reproduce what moto never does.
class RewritingTransport final : public http::ForwardingTransport {
 public:
  using Rewrite = std::function<std::expected<http::HttpResponse, http::TransportError>(
      const http::HttpRequest&, std::expected<http::HttpResponse, http::TransportError>)>;
  explicit RewritingTransport(Rewrite rewrite)
      : ForwardingTransport(curl_),  // only bound here: curl_ is first used after construction
        rewrite_(std::move(rewrite)) {}
  Task<http::HttpResult> send(const http::HttpRequest& request,
                              const http::HttpTimeouts& timeouts) override {
    auto reply = co_await ForwardingTransport::send(request, timeouts);
    co_return rewrite_(request, std::move(reply));
  }

 private:
  http::CurlTransport curl_;
  Rewrite rewrite_;
};

TEST(DynamoDbProvisioning, IsSafeToRunTwice) {
  DynamoDbWiring wiring(MotoStore::reset_moto());
  // Expected difference: dynalite has no UpdateTimeToLive (UnknownOperationException), which
  // provisioning reports as ttl_enabled = false instead of failing; DescribeTimeToLive there
  // answers DISABLED.
  const bool ttl_supported = testing::test_backend_kind() != "dynalite";
  auto first = provision_table(wiring.client, "provisioned", {});
  ASSERT_TRUE(first) << first.error().code << ": " << first.error().message;
  EXPECT_TRUE(first->created);
  EXPECT_EQ(first->ttl_enabled, ttl_supported);
  auto second = provision_table(wiring.client, "provisioned", {});
  ASSERT_TRUE(second) << second.error().code << ": " << second.error().message;
  EXPECT_FALSE(second->created);
  EXPECT_EQ(second->ttl_enabled, ttl_supported);

  auto ttl = run_blocking(wiring.client.call("DescribeTimeToLive", {{"TableName", "provisioned"}}));
  ASSERT_TRUE(ttl);
  if (ttl_supported) {
    EXPECT_EQ((*ttl)["TimeToLiveDescription"]["AttributeName"], "expiresAt");
  } else {
    EXPECT_EQ((*ttl)["TimeToLiveDescription"]["TimeToLiveStatus"], "DISABLED");
  }
  auto table = run_blocking(wiring.client.call("DescribeTable", {{"TableName", "provisioned"}}));
  ASSERT_TRUE(table);
  EXPECT_EQ((*table)["Table"]["KeySchema"],
            nlohmann::json::parse(R"([{"AttributeName":"pk","KeyType":"HASH"}])"));
  EXPECT_EQ((*table)["Table"]["BillingModeSummary"]["BillingMode"], "PAY_PER_REQUEST");
}

TEST(DynamoDbStore, ConditionalCheckFailureCarriesTheOldItem) {
  MotoStore moto;
  ASSERT_TRUE(run_blocking(moto.store.claim(request("A", t0))));
  auto refused = run_blocking(moto.wiring.client.call_with_body(
      "UpdateItem", encode_claim({.name = kTable}, request("B", t0 + 1s))));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "ConditionalCheckFailedException");
  EXPECT_EQ(refused.error().error_class, ErrorClass::Permanent);
  const auto item = old_item_from_error_body(refused.error().response_body);
  if (testing::test_backend_kind() == "dynalite") {
    // Expected difference: dynalite ignores ReturnValuesOnConditionCheckFailure, so a refusal
    // never carries the old item there; the store then decides by GetItem, the path
    // DecidesRefusalsByGetItemWhenTheOldItemIsMissing and the contract suite cover.
    EXPECT_FALSE(item) << refused.error().response_body;
    return;
  }
  ASSERT_TRUE(item) << refused.error().response_body;
  EXPECT_EQ((*item)["claimToken"]["S"], "A");
}

TEST(DynamoDbStore, DecidesRefusalsByGetItemWhenTheOldItemIsMissing) {
  std::atomic<int> reads{0};
  RewritingTransport strip_old_item([&](const http::HttpRequest& request, auto reply) {
    if (target_of(request).ends_with(".GetItem")) ++reads;
    if (reply && reply->status == 400 &&
        reply->body.find("ConditionalCheckFailed") != std::string::npos) {
      auto body = nlohmann::json::parse(reply->body);
      body.erase("Item");
      reply->body = body.dump();
    }
    return reply;
  });
  MotoStore moto(&strip_old_item);
  auto& store = moto.store;

  ASSERT_EQ(run_blocking(store.claim(request("A", t0)))->outcome, ClaimOutcome::Acquired);
  EXPECT_EQ(run_blocking(store.claim(request("B", t0 + 1s)))->outcome,
            ClaimOutcome::DuplicateInProgress);
  EXPECT_EQ(run_blocking(store.claim(request("B", t0 + 1s, "hash-b")))->outcome,
            ClaimOutcome::PayloadMismatch);
  EXPECT_EQ(run_blocking(store.release("CHG-1", "B")), WriteOutcome::Fenced);
  EXPECT_EQ(run_blocking(store.complete("CHG-1", "A", {"DEBITED", "DBT-1"}, t0 + 2s)),
            WriteOutcome::Written);
  EXPECT_EQ(run_blocking(store.complete("CHG-1", "A", {"DEBITED", "DBT-1"}, t0 + 3s)),
            WriteOutcome::Written);
  EXPECT_EQ(run_blocking(store.fail("CHG-1", "A", {"FAILED_PERMANENT", "X"}, t0 + 3s)),
            WriteOutcome::Fenced);
  const auto done = run_blocking(store.claim(request("C", t0 + 1h)));
  ASSERT_TRUE(done);
  EXPECT_EQ(done->outcome, ClaimOutcome::DuplicateDone);
  EXPECT_EQ(done->record.result_ref, "DBT-1");

  EXPECT_GE(reads.load(), 5) << "each of the five refusals needs one GetItem";
}

TEST(DynamoDbStore, LostClaimResponsesDoNotMakeTheClaimADuplicateOfItself) {
  std::atomic<int> lost{0};
  // The first three UpdateItems reach moto and take effect, but their answers are lost, which
  // exhausts the client's attempts: the store must re-send the claim with the same token.
  RewritingTransport lose_answers([&](const http::HttpRequest& request, auto reply) {
    if (target_of(request).ends_with(".UpdateItem") && lost.fetch_add(1) < 3) {
      return std::expected<http::HttpResponse, http::TransportError>(
          std::unexpected(http::TransportError{.failure = http::TransportFailure::TimeoutAfterSend,
                                               .detail = "answer dropped by the test"}));
    }
    return reply;
  });
  MotoStore moto(&lose_answers);
  const auto claimed = run_blocking(moto.store.claim(request("A", t0)));
  ASSERT_TRUE(claimed) << claimed.error().message;
  EXPECT_EQ(claimed->outcome, ClaimOutcome::Acquired);
  EXPECT_EQ(claimed->record.claim_token, "A");
  EXPECT_EQ(claimed->record.fence, 4) << "every attempt was applied, each by the same claimant";
}

TEST(DynamoDbStore, AClaimWhoseAnswersAreAllLostIsAnAmbiguousError) {
  RewritingTransport lose_answers([](const http::HttpRequest& request, auto reply) {
    if (target_of(request).ends_with(".UpdateItem")) {
      return std::expected<http::HttpResponse, http::TransportError>(
          std::unexpected(http::TransportError{.failure = http::TransportFailure::TimeoutAfterSend,
                                               .detail = "answer dropped by the test"}));
    }
    return reply;
  });
  MotoStore moto(&lose_answers);
  const auto claimed = run_blocking(moto.store.claim(request("A", t0)));
  ASSERT_FALSE(claimed);
  EXPECT_EQ(claimed.error().error_class, ErrorClass::Retryable);
  EXPECT_EQ(claimed.error().code, "TimeoutAfterSend");
  EXPECT_TRUE(claimed.error().ambiguous) << "the claim may have been written";
  EXPECT_EQ(claimed.error().message, "answer dropped by the test") << "a flag, never text";
}

TEST(DynamoDbStore, LostCompletionResponseIsStillWritten) {
  std::atomic<bool> drop_next_update{false};
  RewritingTransport lose_answer([&](const http::HttpRequest& request, auto reply) {
    if (target_of(request).ends_with(".UpdateItem") && drop_next_update.exchange(false)) {
      return std::expected<http::HttpResponse, http::TransportError>(
          std::unexpected(http::TransportError{.failure = http::TransportFailure::TimeoutAfterSend,
                                               .detail = "answer dropped by the test"}));
    }
    return reply;
  });
  MotoStore moto(&lose_answer);
  ASSERT_EQ(run_blocking(moto.store.claim(request("A", t0)))->outcome, ClaimOutcome::Acquired);
  drop_next_update = true;
  EXPECT_EQ(run_blocking(moto.store.complete("CHG-1", "A", {"DEBITED", "DBT-1"}, t0 + 1s)),
            WriteOutcome::Written);
  EXPECT_EQ((*run_blocking(moto.store.get("CHG-1")))->state, idempotency::ClaimState::Done);
}

TEST(DynamoDbStore, MissingTableIsAPermanentError) {
  DynamoDbWiring wiring(MotoStore::reset_moto());
  DynamoDbIdempotencyStore store(wiring.client, {.name = "no-such-table"});
  const auto claimed = run_blocking(store.claim(request("A", t0)));
  ASSERT_FALSE(claimed);
  EXPECT_EQ(claimed.error().error_class, ErrorClass::Permanent);
  EXPECT_EQ(claimed.error().code, "ResourceNotFoundException");
}

TEST(DynamoDbStore, UnreachableEndpointIsRetryable) {
  DynamoDbWiring wiring("http://127.0.0.1:1");
  DynamoDbIdempotencyStore store(wiring.client, {.name = kTable});
  const auto record = run_blocking(store.get("CHG-1"));
  ASSERT_FALSE(record);
  EXPECT_EQ(record.error().error_class, ErrorClass::Retryable);
  EXPECT_EQ(record.error().code, "CouldNotConnect");
}

}  // namespace
}  // namespace ic::dynamodb
