// The bank pacer: the AIMD limit learns from each debit, the token bucket spaces them, and a
// stop while waiting sends nothing.
#include "application/bank_pacer.hpp"

#include <gtest/gtest.h>

#include "event/run_blocking.hpp"
#include "testing/advancing_waiter.hpp"
#include "testing/fakes.hpp"

namespace ic::testing {
namespace {

struct LimitSeen final : application::PacerObserver {
  std::vector<std::pair<int, int>> seen;
  void on_bank_limit(int limit, int in_flight) override { seen.emplace_back(limit, in_flight); }
};

class BankPacerTest : public ::testing::Test {
 protected:
  ManualClock clock;
  AdvancingWaiter waiter{clock};
  FakeBank bank;
  AimdLimit limit{{.min = 1, .max = 8, .slow_call = 2000ms}, clock};
  LimitSeen seen;
  const domain::Charge charge = make_charge();
};

TEST_F(BankPacerTest, PassesTheDebitThroughAndReportsTheLimit) {
  application::BankPacer pacer(bank, limit, nullptr, clock, waiter, &seen);
  EXPECT_TRUE(
      std::holds_alternative<domain::Debited>(event::run_blocking(pacer.debit(charge, "k1"))));
  EXPECT_EQ(bank.calls(), 1);
  ASSERT_FALSE(seen.seen.empty());
  EXPECT_EQ(seen.seen.front(), std::pair(8, 1)) << "in flight during the call";
  EXPECT_EQ(seen.seen.back(), std::pair(8, 0));
}

TEST_F(BankPacerTest, AnUnavailableBankShrinksTheLimit) {
  application::BankPacer pacer(bank, limit, nullptr, clock, waiter);
  bank.script(charge.id.value(), {domain::DebitUnavailable{"HTTP 503"}});
  (void)event::run_blocking(pacer.debit(charge, "k1"));
  EXPECT_EQ(limit.limit(), 6);
}

TEST_F(BankPacerTest, ASlowBankShrinksTheLimit) {
  application::BankPacer pacer(bank, limit, nullptr, clock, waiter);
  bank.before_debit = [&](const domain::Charge&) { clock.advance(2500ms); };
  (void)event::run_blocking(pacer.debit(charge, "k1"));
  EXPECT_EQ(limit.limit(), 6);
}

TEST_F(BankPacerTest, TheTokenBucketSpacesDebits) {
  TokenBucket bucket(2.0, 1.0, clock);
  application::BankPacer pacer(bank, limit, &bucket, clock, waiter);
  const Instant start = clock.now();
  for (int i = 0; i < 5; ++i)
    (void)event::run_blocking(pacer.debit(charge, "k" + std::to_string(i)));
  EXPECT_EQ(bank.calls(), 5);
  EXPECT_EQ(clock.now() - start, 2000ms) << "one at once, then one every 500 ms";
}

TEST_F(BankPacerTest, AStopWhileWaitingForASlotSendsNothing) {
  AimdLimit full({.min = 1, .max = 1}, clock);
  ASSERT_TRUE(full.try_acquire());  // the one slot is taken
  application::BankPacer pacer(bank, full, nullptr, clock, waiter);
  waiter.request_stop();
  const auto result = event::run_blocking(pacer.debit(charge, "k1"));
  ASSERT_TRUE(std::holds_alternative<domain::DebitUnavailable>(result));
  EXPECT_EQ(bank.calls(), 0);
}

TEST_F(BankPacerTest, ARampHoldsCallersUntilItGrows) {
  AimdLimit ramped({.min = 1, .max = 4, .ramp = 1000ms}, clock);
  ramped.restart();
  ASSERT_TRUE(ramped.try_acquire());  // the ramp's one slot is taken
  application::BankPacer pacer(bank, ramped, nullptr, clock, waiter);
  const Instant start = clock.now();
  EXPECT_TRUE(
      std::holds_alternative<domain::Debited>(event::run_blocking(pacer.debit(charge, "k1"))));
  EXPECT_GE(clock.now() - start, 250ms) << "waited until the ramp allowed a second call";
}

}  // namespace
}  // namespace ic::testing
