// Body in, disposition out: invalid bodies never reach the store; valid ones are claimed under
// their chargeId with the canonical hash, so a reformatted producer retry is a duplicate.
#include "application/charge_message_handler.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "application/payload_hash.hpp"
#include "core/sha256.hpp"
#include "domain/charge_status.hpp"
#include "event/run_blocking.hpp"
#include "testing/advancing_waiter.hpp"
#include "testing/clocks.hpp"
#include "testing/fakes.hpp"
#include "testing/in_memory_store.hpp"

namespace ic::application {
namespace {

using namespace std::chrono_literals;

class HandlerTest : public ::testing::Test {
 protected:
  testing::ManualClock clock;
  testing::SequentialTokens tokens;
  testing::FakeBank bank;
  testing::FakeNotifier notifier;
  application::ChargeObserver observer;
  testing::NoHeartbeat heartbeat;
  memory::InMemoryIdempotencyStore store{std::chrono::hours(1)};
  testing::AdvancingWaiter waiter{clock};  // nothing here waits
  application::ChargeRecoveryService service{
      store, bank, notifier, clock, tokens, observer, waiter, {.lease = 30s, .owner = "w"}};
  ChargeMessageHandler handler{service};
};

const std::string kBody =
    R"({"schemaVersion":1,"chargeId":"CHG-1","accountId":"ACC-0012345678",)"
    R"("chargeType":"SMS_ALERT_FEE","amountMinor":2500,"currency":"INR","dueDate":"2026-11-30"})";

TEST_F(HandlerTest, InvalidBodyIsDeadLetteredWithoutClaiming) {
  const consumer::Disposition d =
      event::run_blocking(handler.handle(R"({"schemaVersion":1})", 1, heartbeat));
  const auto* dead = std::get_if<consumer::DeadLetter>(&d);
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(dead->reason, domain::dlq_reason::kInvalidMessage);
  EXPECT_EQ(dead->detail, "chargeId: is required");
  EXPECT_EQ(bank.calls(), 0);
}

TEST_F(HandlerTest, ValidBodyIsClaimedWithTheCanonicalHash) {
  EXPECT_TRUE(std::holds_alternative<consumer::Ack>(
      event::run_blocking(handler.handle(kBody, 1, heartbeat))));
  auto record = event::run_blocking(store.get("CHG-1"));
  ASSERT_TRUE(record && *record);
  EXPECT_EQ((*record)->payload_hash,
            sha256_hex("v1|CHG-1|ACC-0012345678|SMS_ALERT_FEE|2500|INR|2026-11-30"));
}

TEST_F(HandlerTest, ReformattedRetryOfTheSameChargeIsADuplicate) {
  ASSERT_TRUE(std::holds_alternative<consumer::Ack>(
      event::run_blocking(handler.handle(kBody, 1, heartbeat))));
  const std::string reformatted =
      R"({ "dueDate": "2026-11-30", "currency": "INR", "amountMinor": 2500,
           "chargeType": "SMS_ALERT_FEE", "accountId": "ACC-0012345678",
           "chargeId": "CHG-1", "schemaVersion": 1, "traceId": "retry-2" })";
  EXPECT_TRUE(std::holds_alternative<consumer::Ack>(
      event::run_blocking(handler.handle(reformatted, 2, heartbeat))));
  EXPECT_EQ(bank.calls(), 1);
}

TEST_F(HandlerTest, SameChargeIdWithAnotherAmountIsAPayloadMismatch) {
  ASSERT_TRUE(std::holds_alternative<consumer::Ack>(
      event::run_blocking(handler.handle(kBody, 1, heartbeat))));
  std::string changed = kBody;
  changed.replace(changed.find("2500"), 4, "9900");
  const consumer::Disposition d = event::run_blocking(handler.handle(changed, 1, heartbeat));
  ASSERT_TRUE(std::holds_alternative<consumer::DeadLetter>(d));
  EXPECT_EQ(std::get<consumer::DeadLetter>(d).reason, domain::dlq_reason::kPayloadMismatch);
  EXPECT_EQ(bank.calls(), 1);
}

}  // namespace
}  // namespace ic::application
