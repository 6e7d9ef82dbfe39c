// The loop's waits: a WaitQueue wait ends for exactly one reason (notified, its deadline, a
// stop), first come first served; sleeps end at their time or at a stop; a semaphore hands its
// permits out in turn and lets a stopped acquirer go without one.
#include "event/wait_queue.hpp"

#include <gtest/gtest.h>

#include <vector>

#include "testing/clocks.hpp"

namespace ic::event {
namespace {

using namespace std::chrono_literals;
using testing::ManualSteadyClock;

struct Fixture : ::testing::Test {
  ManualSteadyClock clock;
  EventLoop loop{clock};
};

using WaitQueueTest = Fixture;
using SleepTest = Fixture;
using SemaphoreTest = Fixture;

TEST_F(WaitQueueTest, NotifyOneWakesTheLongestWaitingFirst) {
  WaitQueue queue(loop);
  std::vector<int> woken;
  auto waiter = [&](int id) -> Task<void> {
    EXPECT_EQ(co_await queue.wait(), Wake::Notified);
    woken.push_back(id);
  };
  spawn(waiter(1));
  spawn(waiter(2));
  spawn(waiter(3));
  EXPECT_TRUE(queue.notify_one());
  loop.run_ready();
  EXPECT_EQ(woken, (std::vector<int>{1}));
  queue.notify_all();
  EXPECT_TRUE(woken.size() == 1) << "woken from the loop, never inside notify_all";
  loop.run_ready();
  EXPECT_EQ(woken, (std::vector<int>{1, 2, 3}));
  EXPECT_FALSE(queue.notify_one());
}

TEST_F(WaitQueueTest, EndsAtItsDeadlineAndNotBefore) {
  WaitQueue queue(loop);
  std::optional<Wake> wake;
  auto waiter = [&]() -> Task<void> { wake = co_await queue.wait(clock.now() + 50ms); };
  spawn(waiter());
  clock.advance(49ms);
  loop.run_ready();
  EXPECT_FALSE(wake);
  clock.advance(1ms);
  loop.run_ready();
  EXPECT_EQ(wake, Wake::TimedOut);
  EXPECT_FALSE(queue.has_waiters());
}

TEST_F(WaitQueueTest, AStopEndsItAndAStopAlreadyRequestedDoesNotWaitAtAll) {
  WaitQueue queue(loop);
  std::stop_source stop;
  std::optional<Wake> first;
  auto long_waiter = [&]() -> Task<void> {
    first = co_await queue.wait(clock.now() + 1h, stop.get_token());
  };
  spawn(long_waiter());
  loop.run_ready();
  stop.request_stop();
  loop.run_ready();
  EXPECT_EQ(first, Wake::Stopped);
  std::optional<Wake> second;
  auto late_waiter = [&]() -> Task<void> {
    second = co_await queue.wait(std::nullopt, stop.get_token());
  };
  spawn(late_waiter());
  EXPECT_EQ(second, Wake::Stopped) << "no suspension at all";
  EXPECT_FALSE(queue.has_waiters());
}

TEST_F(WaitQueueTest, OnlyTheFirstReasonCounts) {
  WaitQueue queue(loop);
  std::stop_source stop;
  std::optional<Wake> wake;
  auto waiter = [&]() -> Task<void> {
    wake = co_await queue.wait(clock.now() + 10ms, stop.get_token());
  };
  spawn(waiter());
  queue.notify_all();
  clock.advance(1s);
  stop.request_stop();
  loop.run_ready();
  EXPECT_EQ(wake, Wake::Notified);
}

TEST_F(SleepTest, SleepsUntilItsTimeOrAStop) {
  std::vector<std::string> ended;
  std::stop_source stop;
  auto sleeper = [&](std::string name, Millis delay, std::stop_token token) -> Task<void> {
    const bool slept = co_await sleep_for(loop, delay, std::move(token));
    ended.push_back((slept ? "slept " : "stopped ") + name);
  };
  spawn(sleeper("20", 20ms, {}));
  spawn(sleeper("10", 10ms, stop.get_token()));
  spawn(sleeper("1h", 1h, stop.get_token()));
  clock.advance(15ms);
  loop.run_ready();
  stop.request_stop();
  loop.run_ready();
  clock.advance(5ms);
  loop.run_ready();
  EXPECT_EQ(ended, (std::vector<std::string>{"slept 10", "stopped 1h", "slept 20"}));
}

TEST_F(SemaphoreTest, HandsPermitsOutInTurnAndLetsAStoppedAcquirerGo) {
  Semaphore slots(loop, 1);
  std::stop_source stop;
  std::vector<std::string> got;
  // (co_await is kept out of ?: and of && / ||: gcc 12 miscompiles it there.)
  auto acquirer = [&](std::string name, std::stop_token token) -> Task<void> {
    const bool acquired = co_await slots.acquire(token);
    got.push_back(acquired ? name : name + " stopped");
  };
  spawn(acquirer("a", {}));
  spawn(acquirer("b", stop.get_token()));
  spawn(acquirer("c", {}));
  EXPECT_EQ(got, (std::vector<std::string>{"a"}));
  stop.request_stop();
  loop.run_ready();
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b stopped"}));
  slots.release();
  loop.run_ready();
  EXPECT_EQ(got, (std::vector<std::string>{"a", "b stopped", "c"}));
  EXPECT_EQ(slots.available(), 0u);
  slots.release();
  EXPECT_TRUE(slots.try_acquire());
  EXPECT_FALSE(slots.try_acquire());
}

}  // namespace
}  // namespace ic::event
