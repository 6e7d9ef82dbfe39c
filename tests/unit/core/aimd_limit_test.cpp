#include "core/aimd_limit.hpp"

#include <gtest/gtest.h>

#include "testing/clocks.hpp"

namespace ic {
namespace {

using testing::ManualClock;
using namespace std::chrono_literals;

TEST(AimdLimitTest, StartsAtTheMaximumAndAdmitsThatMany) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 3}, clock);
  EXPECT_EQ(limit.limit(), 3);
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_FALSE(limit.try_acquire());
  EXPECT_EQ(limit.in_flight(), 3);
  limit.release(10ms, false);
  EXPECT_TRUE(limit.try_acquire());
}

TEST(AimdLimitTest, AFailureCutsTheLimitByAQuarterDownToTheMinimum) {
  ManualClock clock;
  AimdLimit limit({.min = 2, .max = 16}, clock);
  ASSERT_TRUE(limit.try_acquire());
  limit.release(10ms, true);
  EXPECT_EQ(limit.limit(), 12);
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(limit.try_acquire());
    limit.release(10ms, true);
  }
  EXPECT_EQ(limit.limit(), 2);
}

TEST(AimdLimitTest, ASlowCallCountsAsOverload) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 8, .slow_call = 2000ms}, clock);
  ASSERT_TRUE(limit.try_acquire());
  limit.release(1999ms, false);
  EXPECT_EQ(limit.limit(), 8);
  ASSERT_TRUE(limit.try_acquire());
  limit.release(2000ms, false);
  EXPECT_EQ(limit.limit(), 6);
}

TEST(AimdLimitTest, GrowsByOneAfterALimitsWorthOfSuccessesNearTheLimit) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 10}, clock);
  ASSERT_TRUE(limit.try_acquire());
  limit.release(1ms, true);  // 10 -> 7
  ASSERT_EQ(limit.limit(), 7);
  for (int round = 0; round < 7; ++round) {
    for (int i = 0; i < 4; ++i) ASSERT_TRUE(limit.try_acquire());  // 4 of 7 in flight: near it
    limit.release(1ms, false);
    for (int i = 0; i < 3; ++i) limit.release(1ms, false);
  }
  EXPECT_EQ(limit.limit(), 8);
}

TEST(AimdLimitTest, SuccessesWhileMostlyIdleDoNotRaiseIt) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 10}, clock);
  ASSERT_TRUE(limit.try_acquire());
  limit.release(1ms, true);  // 7
  for (int i = 0; i < 100; ++i) {
    ASSERT_TRUE(limit.try_acquire());  // one in flight of seven
    limit.release(1ms, false);
  }
  EXPECT_EQ(limit.limit(), 7);
}

TEST(AimdLimitTest, NeverAboveTheMaximum) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 2}, clock);
  for (int i = 0; i < 50; ++i) {
    ASSERT_TRUE(limit.try_acquire());
    ASSERT_TRUE(limit.try_acquire());
    limit.release(1ms, false);
    limit.release(1ms, false);
  }
  EXPECT_EQ(limit.limit(), 2);
}

TEST(AimdLimitTest, RestartRampsLinearlyFromTheMinimum) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 11, .ramp = 5000ms}, clock);
  limit.restart();
  EXPECT_EQ(limit.limit(), 1);
  clock.advance(2500ms);
  EXPECT_EQ(limit.limit(), 6);
  clock.advance(2500ms);
  EXPECT_EQ(limit.limit(), 11);
  clock.advance(10s);
  EXPECT_EQ(limit.limit(), 11);
}

TEST(AimdLimitTest, RestartForgetsTheOutagesDecreases) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 8, .ramp = 4000ms}, clock);
  for (int i = 0; i < 10; ++i) {
    ASSERT_TRUE(limit.try_acquire());
    limit.release(1ms, true);
  }
  ASSERT_EQ(limit.limit(), 1);
  limit.restart();
  clock.advance(2s);
  EXPECT_EQ(limit.limit(), 4);
  clock.advance(2s);
  EXPECT_EQ(limit.limit(), 8);
}

TEST(AimdLimitTest, TheRampHoldsCallersBack) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 4, .ramp = 3000ms}, clock);
  limit.restart();
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_FALSE(limit.try_acquire());
  clock.advance(3s);
  EXPECT_TRUE(limit.try_acquire());
}

// Each step of the ramp, where the limit first admits one more call; none once it has ended.
TEST(AimdLimitTest, NextGrowthIsEachStepOfTheRamp) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 4, .ramp = 3000ms}, clock);
  EXPECT_EQ(limit.next_growth(), std::nullopt) << "no ramp";
  limit.restart();
  const Instant start = clock.now();
  for (const Millis step : {1000ms, 2000ms, 3000ms}) {
    const std::optional<Instant> next = limit.next_growth();
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(*next, start + step);
    const int before = limit.limit();
    clock.set(*next - 1ms);
    EXPECT_EQ(limit.limit(), before) << "not a millisecond sooner";
    clock.set(*next);
    EXPECT_EQ(limit.limit(), before + 1);
  }
  EXPECT_EQ(limit.next_growth(), std::nullopt) << "the ramp has ended";
}

TEST(AimdLimitTest, AZeroRampRestartsAtOnce) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 4, .ramp = 0ms}, clock);
  limit.restart();
  EXPECT_EQ(limit.limit(), 4);
}

TEST(AimdLimitTest, ABadConfigurationIsMadeSane) {
  ManualClock clock;
  AimdLimit limit({.min = 0, .max = -3, .backoff = 2.0}, clock);
  EXPECT_EQ(limit.limit(), 1);
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_FALSE(limit.try_acquire());
}

}  // namespace
}  // namespace ic
