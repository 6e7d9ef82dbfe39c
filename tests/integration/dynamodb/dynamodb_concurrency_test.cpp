// 50 threads claim one key over real HTTP against moto (DynamoDB requests serialised, as
// DynamoDB is atomic per item), each on its own loop (event::run_blocking): exactly one wins. The
// same harness, run against a store whose claim reads and then writes, must catch several winners;
// otherwise the test proves nothing.
#include <gtest/gtest.h>

#include <barrier>
#include <map>
#include <thread>

#include "adapters/dynamodb/dynamodb_store.hpp"
#include "adapters/dynamodb/table_provisioner.hpp"
#include "event/run_blocking.hpp"
#include "idempotency/forwarding_store.hpp"
#include "testing/backend_fixture.hpp"
#include "testing/clocks.hpp"
#include "testing/moto_fixture.hpp"

namespace ic::dynamodb {
namespace {

using namespace std::chrono_literals;
using idempotency::ClaimOutcome;
using testing::DynamoDbWiring;
using testing::kTable;
using testing::shared_backend;

constexpr int kThreads = 50;
using testing::t0;

struct RaceResult {
  std::map<ClaimOutcome, int> outcomes;
  int errors = 0;
  [[nodiscard]] int count(ClaimOutcome outcome) const {
    auto it = outcomes.find(outcome);
    return it == outcomes.end() ? 0 : it->second;
  }
};

// Every thread claims "CHG-RACE" with its own token, all released at once by a barrier.
RaceResult race_for_one_key(idempotency::IdempotencyStore& store) {
  std::barrier start(kThreads);
  std::mutex mutex;
  RaceResult result;
  std::vector<std::jthread> threads;
  for (int i = 0; i < kThreads; ++i) {
    threads.emplace_back([&, i] {
      start.arrive_and_wait();
      auto claimed = event::run_blocking(store.claim({.key = "CHG-RACE",
                                                      .payload_hash = "h",
                                                      .token = "token-" + std::to_string(i),
                                                      .owner = "t",
                                                      .now = t0,
                                                      .lease = 60s}));
      std::lock_guard lock(mutex);
      if (claimed) {
        ++result.outcomes[claimed->outcome];
      } else {
        ++result.errors;
      }
    });
  }
  threads.clear();  // joins
  return result;
}

// The broken protocol of the negative control: read, decide, then write unconditionally.
// `between` runs after the read; the test makes every thread read before any writes (blocking
// each racer's own loop, which serves nobody else). Every other call goes to the real store.
class ReadThenWriteStore final : public idempotency::ForwardingStore {
 public:
  ReadThenWriteStore(aws::JsonClient& client, std::function<void()> between)
      : ForwardingStore(real_),  // only bound here: real_ is first used after construction
        client_(client),
        real_(client, {.name = kTable}),
        between_(std::move(between)) {}

  Task<idempotency::ClaimReply> claim(const idempotency::ClaimRequest& request) override {
    auto existing = co_await real_.get(request.key);
    between_();  // before any early return: every racer must reach the barrier
    if (!existing) co_return std::unexpected(existing.error());
    if (*existing && !idempotency::claim_allowed(**existing, request)) {
      co_return idempotency::ClaimResult{
          idempotency::classify_refusal(**existing, request.payload_hash), **existing};
    }
    const auto lease = (request.now + request.lease).time_since_epoch().count();
    const nlohmann::json item = {{"TableName", kTable},
                                 {"Item",
                                  {{"pk", {{"S", request.key}}},
                                   {"state", {{"S", "IN_PROGRESS"}}},
                                   {"leaseUntil", {{"N", std::to_string(lease)}}},
                                   {"claimToken", {{"S", request.token}}},
                                   {"payloadHash", {{"S", request.payload_hash}}}}}};
    auto put = co_await client_.call("PutItem", item);
    if (!put) co_return std::unexpected(put.error());
    auto written = co_await real_.get(request.key);
    if (!written || !*written) co_return std::unexpected(Error{.code = "Vanished"});
    co_return idempotency::ClaimResult{ClaimOutcome::Acquired, **written};
  }

 private:
  aws::JsonClient& client_;
  DynamoDbIdempotencyStore real_;
  std::function<void()> between_;
};

class DynamoDbConcurrency : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(shared_backend().reset());
    ASSERT_TRUE(provision_table(wiring_.client, kTable, {}));
  }
  DynamoDbWiring wiring_{shared_backend().endpoint()};
};

TEST_F(DynamoDbConcurrency, FiftyThreadsOneKeyExactlyOneAcquires) {
  DynamoDbIdempotencyStore store(wiring_.client, {.name = kTable});
  const RaceResult result = race_for_one_key(store);
  EXPECT_EQ(result.errors, 0);
  EXPECT_EQ(result.count(ClaimOutcome::Acquired), 1);
  EXPECT_EQ(result.count(ClaimOutcome::DuplicateInProgress), kThreads - 1);
  EXPECT_EQ((*event::run_blocking(store.get("CHG-RACE")))->fence, 1);
}

TEST_F(DynamoDbConcurrency, NegativeControlReadThenWriteLetsSeveralWin) {
  std::barrier all_have_read(kThreads);
  ReadThenWriteStore broken(wiring_.client, [&] { all_have_read.arrive_and_wait(); });
  const RaceResult result = race_for_one_key(broken);
  EXPECT_EQ(result.errors, 0);
  EXPECT_GT(result.count(ClaimOutcome::Acquired), 1)
      << "the harness must catch a claim that is not atomic";
}

}  // namespace
}  // namespace ic::dynamodb
