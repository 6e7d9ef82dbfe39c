// LocalHolds: a copy refused because this process holds its claim learns the holder's outcome
// here. The holder's end is seen whether it comes before or after the copy starts waiting, so
// none of these tests depends on thread timing.
#include "application/local_holds.hpp"

#include <gtest/gtest.h>

#include <thread>

#include "testing/clocks.hpp"

namespace ic::application {
namespace {

using namespace std::chrono_literals;

class StopFlag final : public HoldWaiter {
 public:
  bool wait_until(Instant) override { return !stop; }
  void notify_all() override {}
  void request_stop() override { stop = true; }
  bool stop_requested() const override { return stop; }
  std::atomic<bool> stop{false};
};

class LocalHoldsTest : public ::testing::Test {
 protected:
  // Awaits from another thread (a holder's own thread never waits for itself).
  LocalAwait await_elsewhere(std::string_view key, std::string_view token, Millis for_at_most) {
    LocalAwait seen;
    std::thread copy([&] { seen = holds.await(key, token, clock.now() + for_at_most, &stop); });
    copy.join();
    return seen;
  }

  testing::ManualClock clock;
  StopFlag stop;
  LocalHolds holds{clock};
};

TEST_F(LocalHoldsTest, AClaimHeldElsewhereIsNotWaitedFor) {
  EXPECT_EQ(await_elsewhere("CHG-1", "tok-other", 60s).state, LocalHoldState::NotHeldHere);
  auto hold = holds.hold("CHG-1", "tok-1");
  EXPECT_EQ(await_elsewhere("CHG-1", "tok-other", 60s).state, LocalHoldState::NotHeldHere)
      << "the record names another holder's token";
}

TEST_F(LocalHoldsTest, ACopySettlesWithTheHoldersFinalWrite) {
  LocalAwait seen;
  {
    auto hold = holds.hold("CHG-1", "tok-1");
    std::thread copy([&] { seen = holds.await("CHG-1", "tok-1", clock.now() + 60s, &stop); });
    hold.finish({});
    copy.join();
  }
  EXPECT_EQ(seen.state, LocalHoldState::Final);
  EXPECT_FALSE(seen.final.failed);
  EXPECT_EQ(await_elsewhere("CHG-1", "tok-1", 0s).state, LocalHoldState::Final)
      << "a copy looking just after the holder ended still finds its answer";
}

TEST_F(LocalHoldsTest, AFailedFinalCarriesItsReason) {
  holds.hold("CHG-1", "tok-1").finish({.failed = true, .failure_reason = "ACCOUNT_CLOSED"});
  const LocalAwait seen = await_elsewhere("CHG-1", "tok-1", 60s);
  ASSERT_EQ(seen.state, LocalHoldState::Final);
  EXPECT_TRUE(seen.final.failed);
  EXPECT_EQ(seen.final.failure_reason, "ACCOUNT_CLOSED");
}

TEST_F(LocalHoldsTest, AHoldEndedWithoutAFinalWriteIsReleased) {
  { auto hold = holds.hold("CHG-1", "tok-1"); }
  EXPECT_EQ(await_elsewhere("CHG-1", "tok-1", 60s).state, LocalHoldState::Released);
}

TEST_F(LocalHoldsTest, AHolderStillRunningAtTheDeadlineIsLeftToTheReCheck) {
  auto hold = holds.hold("CHG-1", "tok-1");
  EXPECT_EQ(await_elsewhere("CHG-1", "tok-1", 0s).state, LocalHoldState::StillHeld);
  stop.request_stop();
  EXPECT_EQ(await_elsewhere("CHG-1", "tok-1", 60s).state, LocalHoldState::StillHeld)
      << "a stopping process does not wait";
}

TEST_F(LocalHoldsTest, TheHoldersOwnThreadNeverWaitsForItself) {
  auto hold = holds.hold("CHG-1", "tok-1");
  EXPECT_EQ(holds.await("CHG-1", "tok-1", clock.now() + 60s, &stop).state,
            LocalHoldState::NotHeldHere);
}

TEST_F(LocalHoldsTest, KnownHereWhileAnotherThreadHoldsItOrLatelyEnded) {
  const auto known_elsewhere = [&](std::string_view token) {
    bool known = false;
    std::thread other([&] { known = holds.known_here("CHG-1", token); });
    other.join();
    return known;
  };
  EXPECT_FALSE(known_elsewhere("tok-1"));
  {
    auto hold = holds.hold("CHG-1", "tok-1");
    EXPECT_TRUE(known_elsewhere("tok-1"));
    EXPECT_FALSE(known_elsewhere("tok-2"));
    EXPECT_FALSE(holds.known_here("CHG-1", "tok-1")) << "not by the holder's own thread";
  }
  EXPECT_TRUE(known_elsewhere("tok-1")) << "ended a moment ago: await() knows how";
}

TEST_F(LocalHoldsTest, OnlyTheRecentEndsAreRemembered) {
  holds.hold("CHG-0", "tok-0").finish({});
  for (std::size_t i = 1; i <= LocalHolds::kRecent; ++i) {
    holds.hold("CHG-" + std::to_string(i), "tok-" + std::to_string(i)).finish({});
  }
  EXPECT_EQ(await_elsewhere("CHG-0", "tok-0", 60s).state, LocalHoldState::NotHeldHere);
  EXPECT_EQ(await_elsewhere("CHG-1", "tok-1", 60s).state, LocalHoldState::Final);
}

}  // namespace
}  // namespace ic::application
