// /health/live of `run`: live while the loop's heartbeat is fresh (an idle loop still beats),
// not live with the reason once it is older than LOOP_STALL_SECONDS or the process is failing;
// a failing process whose stop overruns its bound is ended, one that stops in time is not.
#include "app/liveness.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string_view>
#include <thread>

#include "event/event_loop.hpp"
#include "observability/json_log.hpp"
#include "testing/clocks.hpp"
#include "testing/listener_support.hpp"

namespace ic::app {
namespace {

using namespace std::chrono_literals;
using testing::ManualSteadyClock;

struct LivenessTest : ::testing::Test {
  LivenessTest() { heartbeat.start(); }
  ManualSteadyClock clock;
  event::EventLoop loop{clock};
  event::LoopHeartbeat heartbeat{loop, 250ms};
};

TEST_F(LivenessTest, ALoopThatBeatsIsLiveAndOneThatStoppedTurningIsNot) {
  for (int i = 0; i < 100; ++i) {  // 25 s of an idle loop: the heartbeat alone turns it
    clock.advance(250ms);
    loop.run_ready();
  }
  Liveness live(heartbeat, clock, 15s);
  EXPECT_TRUE(live.check().ok);
  clock.advance(15s);
  EXPECT_TRUE(live.check().ok) << "exactly the limit is still live";
  clock.advance(1ms);  // a turn stuck for 15 s: the heartbeat could not run
  const auto stuck = live.check();
  EXPECT_FALSE(stuck.ok);
  EXPECT_EQ(stuck.code, "LoopStalled");
  EXPECT_EQ(stuck.detail, "the event loop has not turned for 15001 ms");
  loop.run_ready();  // the turn ended: the heartbeat runs at once
  EXPECT_TRUE(live.check().ok);
}

TEST_F(LivenessTest, AFailingProcessIsNotLiveAndEndsWhenItsStopOverruns) {
  std::atomic<int> exits{0};
  Liveness live(heartbeat, clock, 15s);
  live.failing("a receiver died", 10ms, [&] { ++exits; });
  live.failing("another", 10ms, [&] { exits += 100; });  // only the first counts
  const auto failing = live.check();
  EXPECT_FALSE(failing.ok);
  EXPECT_EQ(failing.detail, "a receiver died");
  EXPECT_EQ(failing.code, "Stopping");
  EXPECT_TRUE(testing::eventually([&] { return exits.load() == 1; }));
}

TEST_F(LivenessTest, AStopThatEndsInTimeDisarmsTheExit) {
  std::atomic<int> exits{0};
  {
    Liveness live(heartbeat, clock, 15s);
    live.failing("a receiver died", 1h, [&] { ++exits; });
  }  // destroyed at once: joins its watchdog without running the exit
  EXPECT_EQ(exits.load(), 0);
}

// In a child process (gtest's death tests): quick_exit ends the process. "threadsafe" re-runs
// the test binary for the child, as the logger's writer is a thread.
TEST(ExitOverran, WritesWhyToStderrBeforeEndingTheProcess) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        observability::Logger log(observability::LogLevel::Info);
        exit_overran(log, 35s, 1s);
      },
      ::testing::ExitedWithCode(1), "stop after a receiver failure overran; exiting.*35000");
}

TEST(ExitOverran, EndsTheProcessEvenWhenTheLogIsNotRead) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        observability::Logger log(observability::LogLevel::Info, [](std::string_view) {
          for (;;) std::this_thread::sleep_for(1h);  // a log reader that stopped
        });
        exit_overran(log, 35s, 50ms);
      },
      ::testing::ExitedWithCode(1), "");
}

}  // namespace
}  // namespace ic::app
