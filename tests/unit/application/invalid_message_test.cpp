// What an INVALID_MESSAGE still tells an operator: the chargeId when the body named a valid
// one (the DLQ copy carries it), and an over-long number reported as a number, not as
// malformed JSON.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "application/charge_event_decoder.hpp"
#include "application/charge_message_handler.hpp"
#include "domain/charge_status.hpp"
#include "event/run_blocking.hpp"
#include "testing/advancing_waiter.hpp"
#include "testing/clocks.hpp"
#include "testing/fakes.hpp"
#include "testing/in_memory_store.hpp"

namespace ic::application {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

TEST(ParseableChargeId, IsTheValidChargeIdOfARefusedBody) {
  const auto id =
      parseable_charge_id(R"({"schemaVersion":1,"chargeId":"CHG-7","amountMinor":"x"})");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->value(), "CHG-7");
  // Read before the parse stopped: still known.
  EXPECT_TRUE(parseable_charge_id(R"({"chargeId":"CHG-8","currency":)"));
}

TEST(ParseableChargeId, IsAbsentWhenTheBodyNamesNoValidOne) {
  for (const char* body :
       {"not json", R"({"amountMinor":1})", R"({"chargeId":"has space"})", R"({"chargeId":42})",
        R"({"amountMinor":1,"chargeId":)", R"({"nested":{"chargeId":"CHG-9"}})",
        R"({"chargeId":"CHG-1","chargeId":"CHG-2"})"}) {
    EXPECT_FALSE(parseable_charge_id(body)) << body;
  }
}

TEST(OverLongNumber, IsReportedAsATooLargeNumberOfItsField) {
  const std::string digits(400, '9');
  auto decoded = decode_charge_due_event(R"({"schemaVersion":1,"chargeId":"CHG-1","amountMinor":)" +
                                         digits + "}");
  ASSERT_FALSE(decoded);
  EXPECT_EQ(decoded.error().field, "amountMinor");
  EXPECT_THAT(decoded.error().rule, HasSubstr("number too large"));
  EXPECT_THAT(decoded.error().rule, ::testing::Not(HasSubstr("UTF-8")));
  auto elsewhere = decode_charge_due_event(R"({"x":)" + digits + "}");
  ASSERT_FALSE(elsewhere);
  EXPECT_EQ(elsewhere.error().field, "body");
  EXPECT_THAT(elsewhere.error().rule, HasSubstr("number too large"));
}

TEST(InvalidMessage, TheDeadLetterCarriesTheChargeIdWhenItParsed) {
  testing::ManualClock clock;
  testing::SequentialTokens tokens;
  testing::FakeBank bank;
  testing::FakeNotifier notifier;
  ChargeObserver observer;
  testing::NoHeartbeat heartbeat;
  memory::InMemoryIdempotencyStore store{std::chrono::hours(1)};
  testing::AdvancingWaiter waiter{clock};  // nothing here waits
  ChargeRecoveryService service{store,  bank,     notifier, clock,
                                tokens, observer, waiter,   {.lease = 30s}};
  const ChargeMessageHandler handler{service};

  const consumer::Disposition named = event::run_blocking(handler.handle(
      R"({"schemaVersion":1,"chargeId":"CHG-5","accountId":"ACC-1","amountMinor":2.5})", 1,
      heartbeat));
  const auto* dead = std::get_if<consumer::DeadLetter>(&named);
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(dead->reason, domain::dlq_reason::kInvalidMessage);
  EXPECT_EQ(dead->key, "CHG-5");
  const consumer::Disposition unnamed = event::run_blocking(handler.handle("{", 1, heartbeat));
  ASSERT_TRUE(std::holds_alternative<consumer::DeadLetter>(unnamed));
  EXPECT_EQ(std::get<consumer::DeadLetter>(unnamed).key, "");
  EXPECT_EQ(bank.calls(), 0);
}

}  // namespace
}  // namespace ic::application
