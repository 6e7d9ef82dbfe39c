// LocalHolds: a copy of a claim this process holds learns the holder's outcome here. Holders
// and copies are tasks of one loop; the holder's end is seen whether it comes before or after
// the copy starts waiting, and a copy never waits past its deadline or a stop.
#include "application/local_holds.hpp"

#include <gtest/gtest.h>

#include <optional>

#include "event/run_blocking.hpp"
#include "testing/clocks.hpp"

namespace ic::application {
namespace {

using namespace std::chrono_literals;

class LocalHoldsTest : public ::testing::Test {
 protected:
  // A copy's wait, run to its end on the loop (the holder must have ended, or must end in
  // `meanwhile`, which runs on the loop while the copy waits).
  LocalAwait await(std::string key, std::string token, Millis for_at_most,
                   const std::function<void()>& meanwhile = {}) {
    std::optional<LocalAwait> seen;
    auto copy = [&]() -> Task<void> {
      seen = co_await holds.await(key, token, clock.now() + for_at_most);
    };
    loop.post([&] {
      spawn(copy());
      if (meanwhile) loop.post(meanwhile);  // after the copy is waiting
    });
    loop.run_until([&] { return seen.has_value(); });
    return *seen;
  }

  testing::ManualClock clock;
  event::EventLoop loop;
  LoopWaiter waiter{loop, clock};
  LocalHolds holds{clock, waiter};
};

TEST_F(LocalHoldsTest, AClaimHeldElsewhereIsNotWaitedFor) {
  EXPECT_EQ(await("CHG-1", "tok-other", 60s).state, LocalHoldState::NotHeldHere);
  auto hold = holds.hold("CHG-1", "tok-1", "hash-1");
  EXPECT_EQ(await("CHG-1", "tok-other", 60s).state, LocalHoldState::NotHeldHere)
      << "the record names another holder's token";
}

TEST_F(LocalHoldsTest, ACopySettlesWithTheHoldersFinalWrite) {
  std::optional<LocalHolds::Hold> hold;
  hold.emplace(holds, "CHG-1", "tok-1", "hash-1");
  const LocalAwait seen = await("CHG-1", "tok-1", 60s, [&] { hold->finish({}); });
  EXPECT_EQ(seen.state, LocalHoldState::Final);
  EXPECT_FALSE(seen.final.failed);
  hold.reset();
  EXPECT_EQ(await("CHG-1", "tok-1", 0s).state, LocalHoldState::Final)
      << "a copy looking just after the holder ended still finds its answer";
}

TEST_F(LocalHoldsTest, AFailedFinalCarriesItsReason) {
  holds.hold("CHG-1", "tok-1", "hash-1")
      .finish({.failed = true, .failure_reason = "ACCOUNT_CLOSED"});
  const LocalAwait seen = await("CHG-1", "tok-1", 60s);
  ASSERT_EQ(seen.state, LocalHoldState::Final);
  EXPECT_TRUE(seen.final.failed);
  EXPECT_EQ(seen.final.failure_reason, "ACCOUNT_CLOSED");
}

TEST_F(LocalHoldsTest, AHoldEndedWithoutAFinalWriteIsReleased) {
  { auto hold = holds.hold("CHG-1", "tok-1", "hash-1"); }
  EXPECT_EQ(await("CHG-1", "tok-1", 60s).state, LocalHoldState::Released);
  std::optional<LocalHolds::Hold> hold;
  hold.emplace(holds, "CHG-2", "tok-2", "hash-2");
  EXPECT_EQ(await("CHG-2", "tok-2", 60s, [&] { hold.reset(); }).state, LocalHoldState::Released)
      << "released while the copy waited";
}

TEST_F(LocalHoldsTest, AHolderStillRunningAtTheDeadlineIsLeftToTheReCheck) {
  auto hold = holds.hold("CHG-1", "tok-1", "hash-1");
  EXPECT_EQ(await("CHG-1", "tok-1", 0s).state, LocalHoldState::StillHeld);
  EXPECT_EQ(await("CHG-1", "tok-1", 60s, [&] { clock.advance(61s); }).state,
            LocalHoldState::StillHeld)
      << "the clock passed the deadline while the copy waited";
  EXPECT_EQ(await("CHG-1", "tok-1", 60s, [&] { waiter.request_stop(); }).state,
            LocalHoldState::StillHeld)
      << "a stopping process does not wait";
}

TEST_F(LocalHoldsTest, KnownHereWhileATaskHoldsItOrLatelyEnded) {
  EXPECT_FALSE(holds.known_here("CHG-1", "tok-1"));
  {
    auto hold = holds.hold("CHG-1", "tok-1", "hash-1");
    EXPECT_TRUE(holds.known_here("CHG-1", "tok-1"));
    EXPECT_FALSE(holds.known_here("CHG-1", "tok-2"));
  }
  EXPECT_TRUE(holds.known_here("CHG-1", "tok-1")) << "ended a moment ago: await() knows how";
}

TEST_F(LocalHoldsTest, ALiveHoldIsOfferedToCopiesOfTheSamePayloadOnly) {
  EXPECT_EQ(holds.live_token("CHG-1", "hash-1"), std::nullopt);
  {
    auto hold = holds.hold("CHG-1", "tok-1", "hash-1");
    EXPECT_EQ(holds.live_token("CHG-1", "hash-1"), "tok-1");
    EXPECT_EQ(holds.live_token("CHG-1", "hash-2"), std::nullopt)
        << "another payload is for the store to judge (PAYLOAD_MISMATCH)";
    EXPECT_EQ(holds.live_token("CHG-2", "hash-1"), std::nullopt);
  }
  EXPECT_EQ(holds.live_token("CHG-1", "hash-1"), std::nullopt) << "ended: nothing to wait for";
}

TEST_F(LocalHoldsTest, OnlyTheRecentEndsAreRemembered) {
  holds.hold("CHG-0", "tok-0", "h").finish({});
  for (std::size_t i = 1; i <= LocalHolds::kRecent; ++i) {
    holds.hold("CHG-" + std::to_string(i), "tok-" + std::to_string(i), "h").finish({});
  }
  EXPECT_EQ(await("CHG-0", "tok-0", 60s).state, LocalHoldState::NotHeldHere);
  EXPECT_EQ(await("CHG-1", "tok-1", 60s).state, LocalHoldState::Final);
}

}  // namespace
}  // namespace ic::application
