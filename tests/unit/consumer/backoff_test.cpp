// Receive backoff and RetryLater visibility arithmetic, checked at the bounds and as properties.
#include "consumer/backoff.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "consumer/queue_port.hpp"
#include "core/backoff.hpp"
#include "testing/fixed_random.hpp"

namespace ic::consumer {
namespace {

using namespace std::chrono_literals;

// The receive backoff: equal jitter over the container's base and cap.
Millis receive_backoff(const ExponentialBackoff& policy, int failures, double u) {
  testing::FixedRandom random(u);
  return backoff_delay(failures, policy.base, policy.cap, Jitter::Equal, random);
}

TEST(Backoff, DoublesFromBaseUpToTheCapWithEqualJitter) {
  const ExponentialBackoff policy{.base = 100ms, .cap = 1000ms};
  EXPECT_EQ(receive_backoff(policy, 0, 0.0), 50ms);
  EXPECT_EQ(receive_backoff(policy, 0, 0.999999), 99ms);
  EXPECT_EQ(receive_backoff(policy, 3, 0.0), 400ms);
  EXPECT_EQ(receive_backoff(policy, 4, 0.0), 500ms);  // 1600 capped at 1000
  EXPECT_EQ(receive_backoff(policy, 1'000'000, 0.999999), 999ms);
}

RC_GTEST_PROP(Backoff, StaysWithinHalfCeilingAndCeiling, (int attempt, double raw)) {
  const ExponentialBackoff policy{.base = 7ms, .cap = 20000ms};
  const double u = std::abs(std::fmod(raw, 1.0));
  const int n = std::abs(attempt % 100);
  const auto delay = receive_backoff(policy, n, u);
  RC_ASSERT(delay <= policy.cap);
  RC_ASSERT(delay >= 3ms);
}

TEST(RetryVisibility, RoundsAfterUpAndItsJitterToTheNearestSecond) {
  EXPECT_EQ(retry_visibility(0ms, 0.1, 0.9), 0s);
  EXPECT_EQ(retry_visibility(-5s, 0.1, 0.9), 0s);
  EXPECT_EQ(retry_visibility(1ms, 0.0, 0.0), 1s);
  EXPECT_EQ(retry_visibility(1500ms, 0.1, 0.0), 2s);
  EXPECT_EQ(retry_visibility(10s, 0.1, 0.0), 10s);
  EXPECT_EQ(retry_visibility(10s, 0.1, 0.99), 10s + 1s);  // 10.99 s rounds to 11
  EXPECT_EQ(retry_visibility(10s, 0.1, 0.4), 10s);        // 10.4 s rounds to 10
  EXPECT_EQ(retry_visibility(1s, 0.1, 0.99), 1s) << "a 1 s re-check is not made 2 s by its jitter";
  EXPECT_EQ(retry_visibility(24h, 0.1, 0.5), kMaxVisibility);
  EXPECT_EQ(retry_visibility(12h - 1s, 0.1, 0.9), kMaxVisibility);
}

RC_GTEST_PROP(RetryVisibility, NeverEarlierThanAskedNorBeyondTheCap,
              (std::int64_t ms, double raw)) {
  const double u = std::abs(std::fmod(raw, 1.0));
  const Millis after{std::abs(ms % (100LL * 3600 * 1000))};
  const auto seconds = retry_visibility(after, 0.2, u);
  RC_ASSERT(seconds <= kMaxVisibility);
  RC_ASSERT(seconds >= std::min<Millis>(after, kMaxVisibility));
  RC_ASSERT(seconds <= std::max<Millis>(after * 12 / 10 + 1s, 0s));
}

}  // namespace
}  // namespace ic::consumer
