// The real clock reads the wall clock in whole milliseconds; the real sleeper really waits.
#include "core/time.hpp"

#include <gtest/gtest.h>

namespace ic {
namespace {

using namespace std::chrono_literals;

TEST(RealClock, ReadsTheSystemClockInMilliseconds) {
  const auto before = std::chrono::floor<Millis>(std::chrono::system_clock::now());
  const Instant now = real_clock().now();
  const auto after = std::chrono::system_clock::now();
  EXPECT_GE(now, before);
  EXPECT_LE(now, after);
}

TEST(RealSleeper, WaitsAtLeastTheDuration) {
  const auto started = std::chrono::steady_clock::now();
  real_sleeper().sleep_for(20ms);
  EXPECT_GE(std::chrono::steady_clock::now() - started, 20ms);
}

}  // namespace
}  // namespace ic
