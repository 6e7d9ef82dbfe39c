// The heartbeat timer: ticks repeating after the delay each returns, stopping on nullopt, and
// cancel() waiting for a running tick (the LeaseHeartbeat contract: stop() must not return while
// extend_claim runs).
#include "consumer/heartbeat_scheduler.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <optional>
#include <semaphore>
#include <vector>

#include "testing/listener_support.hpp"

namespace ic::consumer {
namespace {

using namespace std::chrono_literals;
using testing::eventually;

// The delay a tick asks for, or nullopt to stop.
std::optional<Millis> again_after(Millis delay, bool again) {
  return again ? std::optional(delay) : std::nullopt;
}

TEST(HeartbeatScheduler, TicksRepeatUntilTheTickReturnsNullopt) {
  HeartbeatScheduler scheduler;
  std::atomic<int> ticks{0};
  (void)scheduler.schedule(5ms, [&] { return again_after(5ms, ++ticks < 3); });
  ASSERT_TRUE(eventually([&] { return ticks.load() == 3; }));
  std::this_thread::sleep_for(30ms);
  EXPECT_EQ(ticks.load(), 3);
}

TEST(HeartbeatScheduler, FirstTickComesAfterTheInterval) {
  HeartbeatScheduler scheduler;
  const auto start = std::chrono::steady_clock::now();
  std::atomic<std::int64_t> elapsed_ms{-1};
  (void)scheduler.schedule(50ms, [&] {
    elapsed_ms = std::chrono::duration_cast<std::chrono::milliseconds>(
                     std::chrono::steady_clock::now() - start)
                     .count();
    return std::optional<Millis>();
  });
  ASSERT_TRUE(eventually([&] { return elapsed_ms.load() >= 0; }));
  EXPECT_GE(elapsed_ms.load(), 50);
}

TEST(HeartbeatScheduler, CancelWaitsForARunningTickAndPreventsTheNext) {
  HeartbeatScheduler scheduler;
  std::binary_semaphore entered(0);
  std::binary_semaphore proceed(0);
  std::atomic<int> ticks{0};
  std::atomic<bool> tick_running{false};
  const auto id = scheduler.schedule(1ms, [&] {
    tick_running = true;
    entered.release();
    proceed.acquire();
    tick_running = false;
    ++ticks;
    return std::optional<Millis>(1ms);
  });
  entered.acquire();
  std::atomic<bool> cancelled{false};
  std::thread canceller([&] {
    scheduler.cancel(id);
    EXPECT_FALSE(tick_running.load()) << "cancel returned while the tick ran";
    cancelled = true;
  });
  std::this_thread::sleep_for(20ms);
  EXPECT_FALSE(cancelled.load());
  proceed.release();
  canceller.join();
  std::this_thread::sleep_for(20ms);
  EXPECT_EQ(ticks.load(), 1);
}

TEST(HeartbeatScheduler, CancellingOneLeavesOthersRunning) {
  HeartbeatScheduler scheduler;
  std::atomic<int> a{0}, b{0};
  const auto first = scheduler.schedule(2ms, [&] { return again_after(2ms, ++a > 0); });
  (void)scheduler.schedule(2ms, [&] { return again_after(2ms, ++b > 0); });
  scheduler.cancel(first);
  const int a_after = a.load();
  ASSERT_TRUE(eventually([&] { return b.load() >= 3; }));
  EXPECT_EQ(a.load(), a_after);
}

TEST(HeartbeatScheduler, ATickThatThrowsStopsRepeatingAndTheTimerSurvives) {
  HeartbeatScheduler scheduler;
  std::atomic<int> thrown{0}, healthy{0};
  (void)scheduler.schedule(2ms, [&]() -> std::optional<Millis> {
    ++thrown;
    throw std::runtime_error("store exploded");
  });
  (void)scheduler.schedule(2ms, [&] { return again_after(2ms, ++healthy > 0); });
  ASSERT_TRUE(eventually([&] { return healthy.load() >= 5; }));
  EXPECT_EQ(thrown.load(), 1);
}

TEST(HeartbeatScheduler, EachRunChoosesTheDelayBeforeTheNext) {
  HeartbeatScheduler scheduler;
  std::vector<std::chrono::steady_clock::time_point> at;
  std::atomic<int> ticks{0};
  // A long first gap, then short ones: the second run must not wait the first delay again.
  (void)scheduler.schedule(1ms, [&] {
    at.push_back(std::chrono::steady_clock::now());
    const int n = ++ticks;
    return n == 1 ? again_after(500ms, true) : again_after(1ms, n < 4);
  });
  ASSERT_TRUE(eventually([&] { return ticks.load() == 4; }));
  EXPECT_GE(at[1] - at[0], 500ms);
  // Two 1 ms gaps together stay well below the 500 ms one even on a loaded machine.
  EXPECT_LT(at[3] - at[1], at[1] - at[0]);
}

}  // namespace
}  // namespace ic::consumer
