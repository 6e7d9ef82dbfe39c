// A repeated warning goes out once per window per key, and the line that goes out carries how
// many were held back (issue 24: 25 "receive failed" lines in 10 s with SQS unreachable).
#include "observability/repeat_limiter.hpp"

#include <gtest/gtest.h>

#include "testing/clocks.hpp"

namespace ic::observability {
namespace {

using namespace std::chrono_literals;
using ic::testing::ManualClock;

TEST(RepeatLimiterTest, OneLinePerWindowPerKeyWithTheCountHeldBack) {
  ManualClock clock;
  RepeatLimiter limiter(30s, clock);
  EXPECT_EQ(limiter.admit("ConnectionRefused"), 0u) << "the first line goes out";
  for (int i = 0; i < 24; ++i) {
    clock.advance(400ms);  // 25 attempts in 10 s
    EXPECT_EQ(limiter.admit("ConnectionRefused"), std::nullopt) << i;
  }
  EXPECT_EQ(limiter.admit("Throttling"), 0u) << "another key has its own window";
  clock.advance(20400ms);  // 30 s after the first line: 24 x 0.4 s + 20.4 s
  EXPECT_EQ(limiter.admit("ConnectionRefused"), 24u) << "the next line counts those held back";
  clock.advance(1s);
  EXPECT_EQ(limiter.admit("ConnectionRefused"), std::nullopt);
  clock.advance(30s);
  EXPECT_EQ(limiter.admit("ConnectionRefused"), 1u);
}

TEST(RepeatLimiterTest, AClockSteppedBackLetsTheLineOut) {
  ManualClock clock;
  RepeatLimiter limiter(30s, clock);
  ASSERT_EQ(limiter.admit("k"), 0u);
  clock.advance(-5s);
  EXPECT_EQ(limiter.admit("k"), 0u);
}

TEST(RepeatLimiterTest, KeysAreBoundedAndAnEvictedKeyStartsOver) {
  ManualClock clock;
  RepeatLimiter limiter(30s, clock);
  for (std::size_t i = 0; i <= RepeatLimiter::kMaxKeys; ++i) {
    ASSERT_EQ(limiter.admit("key-" + std::to_string(i)), 0u);
    clock.advance(1ms);
  }
  EXPECT_EQ(limiter.admit("key-0"), 0u) << "the oldest was dropped, so it goes out again";
  EXPECT_EQ(limiter.admit("key-5"), std::nullopt) << "a kept key is still limited";
}

}  // namespace
}  // namespace ic::observability
