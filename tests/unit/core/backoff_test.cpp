// The one backoff formula in its three modes: exact values at the bounds, bounds as properties
// (also for a faulty random source), and no overflow whatever the attempt number.
#include "core/backoff.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <limits>

#include "testing/fixed_random.hpp"

namespace ic {
namespace {

using namespace std::chrono_literals;
using testing::FixedRandom;

// Fails the test when drawn from: Jitter::None must not consume randomness.
class UnusedRandom final : public Random {
 public:
  double uniform01() override {
    ADD_FAILURE() << "Jitter::None drew a random value";
    return 0.0;
  }
};

TEST(Backoff, NoneIsTheCappedExponential) {
  UnusedRandom unused;
  const auto none = [&](int attempt) {
    return backoff_delay(attempt, 2s, 300s, Jitter::None, unused);
  };
  EXPECT_EQ(none(0), 2s);
  EXPECT_EQ(none(1), 4s);
  EXPECT_EQ(none(3), 16s);
  EXPECT_EQ(none(7), 256s);
  EXPECT_EQ(none(8), 300s);  // 512 s capped
  EXPECT_EQ(none(49), 300s);
  EXPECT_EQ(none(-1), 2s);  // a negative attempt counts as the first
}

TEST(Backoff, FullJitterScalesTheWholeCeiling) {
  FixedRandom top(0.999999);
  EXPECT_EQ(backoff_delay(0, 1000ms, 20s, Jitter::Full, top), 999ms);
  EXPECT_EQ(backoff_delay(1, 1000ms, 20s, Jitter::Full, top), 1999ms);
  EXPECT_EQ(backoff_delay(2, 1000ms, 20s, Jitter::Full, top), 3999ms);
  EXPECT_EQ(backoff_delay(39, 1000ms, 20s, Jitter::Full, top), 19999ms);
  FixedRandom zero(0.0);
  EXPECT_EQ(backoff_delay(2, 1000ms, 20s, Jitter::Full, zero), 0ms);
}

TEST(Backoff, EqualJitterKeepsHalfTheCeiling) {
  FixedRandom zero(0.0);
  FixedRandom top(0.999999);
  EXPECT_EQ(backoff_delay(0, 100ms, 1000ms, Jitter::Equal, zero), 50ms);
  EXPECT_EQ(backoff_delay(0, 100ms, 1000ms, Jitter::Equal, top), 99ms);
  EXPECT_EQ(backoff_delay(4, 100ms, 1000ms, Jitter::Equal, zero), 500ms);
  EXPECT_EQ(backoff_delay(4, 100ms, 1000ms, Jitter::Equal, top), 999ms);
}

TEST(Backoff, DegenerateBaseAndCap) {
  FixedRandom top(0.999999);
  EXPECT_EQ(backoff_delay(5, 0ms, 1000ms, Jitter::Equal, top), 0ms);
  EXPECT_EQ(backoff_delay(5, -5ms, 1000ms, Jitter::None, top), 0ms);
  EXPECT_EQ(backoff_delay(5, 100ms, -1ms, Jitter::Full, top), 0ms);
  EXPECT_EQ(backoff_delay(0, 5000ms, 1000ms, Jitter::None, top), 1000ms);  // base above cap
}

TEST(Backoff, NeverOverflows) {
  FixedRandom one(1.0);
  constexpr Millis kMax = Millis::max();
  EXPECT_EQ(backoff_delay(std::numeric_limits<int>::max(), 1ms, kMax, Jitter::None, one), kMax);
  EXPECT_EQ(backoff_delay(std::numeric_limits<int>::max(), 1ms, kMax, Jitter::Full, one), kMax);
  EXPECT_EQ(backoff_delay(std::numeric_limits<int>::max(), 3ms, kMax, Jitter::Equal, one), kMax);
}

RC_GTEST_PROP(BackoffProperty, JitterStaysWithinItsModesBoundsEvenForAFaultySource, ()) {
  const double u = *rc::gen::oneOf(
      rc::gen::arbitrary<double>(),
      rc::gen::element(std::numeric_limits<double>::quiet_NaN(),
                       std::numeric_limits<double>::infinity(),
                       -std::numeric_limits<double>::infinity(), -1.0, 0.0, 0.999999, 1.0, 2.0));
  const int attempt = *rc::gen::inRange(-5, 2000);
  const Millis base{*rc::gen::inRange<std::int64_t>(0, 100'000)};
  const Millis cap{*rc::gen::inRange<std::int64_t>(0, 86'400'000)};
  FixedRandom random(u);
  const Millis ceiling = backoff_delay(attempt, base, cap, Jitter::None, random);
  RC_ASSERT(ceiling >= 0ms);
  RC_ASSERT(ceiling <= cap);
  const Millis full = backoff_delay(attempt, base, cap, Jitter::Full, random);
  RC_ASSERT(full >= 0ms);
  RC_ASSERT(full <= ceiling);
  const Millis equal = backoff_delay(attempt, base, cap, Jitter::Equal, random);
  RC_ASSERT(equal >= ceiling / 2);
  RC_ASSERT(equal <= ceiling);
}

}  // namespace
}  // namespace ic
