// ForwardingClock reads its target's time, so a decorator derived from it changes only now().
#include "core/forwarding_clock.hpp"

#include <gtest/gtest.h>

#include "testing/clocks.hpp"

namespace ic {
namespace {

TEST(ForwardingClock, ReadsTheTargetsTime) {
  testing::ManualClock clock;
  ForwardingClock forwarding(clock);
  EXPECT_EQ(forwarding.now(), clock.now());
  clock.advance(Millis{1500});
  EXPECT_EQ(forwarding.now(), clock.now());
  EXPECT_EQ(&forwarding.target(), &clock);
}

}  // namespace
}  // namespace ic
