#include "core/token_bucket.hpp"

#include <gtest/gtest.h>

#include <cmath>

#include "testing/clocks.hpp"

namespace ic {
namespace {

using testing::ManualClock;
using namespace std::chrono_literals;

TEST(TokenBucketTest, ZeroRateIsUnlimited) {
  ManualClock clock;
  TokenBucket bucket(0.0, 0.0, clock);
  EXPECT_TRUE(bucket.unlimited());
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(bucket.try_take(), 0ms);
}

TEST(TokenBucketTest, NegativeOrNanRateIsUnlimited) {
  ManualClock clock;
  EXPECT_TRUE(TokenBucket(-5.0, 1.0, clock).unlimited());
  EXPECT_TRUE(TokenBucket(std::nan(""), 1.0, clock).unlimited());
}

TEST(TokenBucketTest, ABurstThenOneTokenPerPeriod) {
  ManualClock clock;
  TokenBucket bucket(10.0, 3.0, clock);
  EXPECT_EQ(bucket.try_take(), 0ms);
  EXPECT_EQ(bucket.try_take(), 0ms);
  EXPECT_EQ(bucket.try_take(), 0ms);
  EXPECT_EQ(bucket.try_take(), 100ms);
  clock.advance(50ms);
  EXPECT_EQ(bucket.try_take(), 50ms);
  clock.advance(50ms);
  EXPECT_EQ(bucket.try_take(), 0ms);
  EXPECT_EQ(bucket.try_take(), 100ms);
}

TEST(TokenBucketTest, NeverHoldsMoreThanTheBurst) {
  ManualClock clock;
  TokenBucket bucket(1.0, 2.0, clock);
  clock.advance(1h);
  EXPECT_EQ(bucket.try_take(), 0ms);
  EXPECT_EQ(bucket.try_take(), 0ms);
  EXPECT_GT(bucket.try_take(), 0ms);
}

TEST(TokenBucketTest, RateOverTimeMatchesTheSetting) {
  ManualClock clock;
  TokenBucket bucket(4.0, 1.0, clock);
  int taken = 0;
  for (int ms = 0; ms < 10'000; ms += 125) {  // half a token per step, exact in binary
    if (bucket.try_take() == 0ms) ++taken;
    clock.advance(125ms);
  }
  EXPECT_EQ(taken, 40);
}

TEST(TokenBucketTest, AClockSteppedBackAddsNothing) {
  ManualClock clock;
  TokenBucket bucket(1.0, 1.0, clock);
  EXPECT_EQ(bucket.try_take(), 0ms);
  clock.advance(-10s);
  EXPECT_GT(bucket.try_take(), 0ms);
}

}  // namespace
}  // namespace ic
