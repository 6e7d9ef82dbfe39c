// The event loop: timers run in due order (ties in the order added) and only once due on the
// loop's clock, a cancelled timer never runs, work posted from another thread runs on the
// loop's thread in order, resumed coroutines wait for the next pass, and descriptors wake it.
#include "event/event_loop.hpp"

#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <thread>
#include <vector>

#include "testing/clocks.hpp"

namespace ic::event {
namespace {

using namespace std::chrono_literals;
using testing::ManualSteadyClock;

TEST(EventLoop, TimersRunInDueOrderAndTiesInTheOrderAdded) {
  ManualSteadyClock clock;
  EventLoop loop(clock);
  std::vector<int> order;
  const auto start = clock.now();
  loop.add_timer(start + 30ms, [&] { order.push_back(3); });
  loop.add_timer(start + 10ms, [&] { order.push_back(1); });
  loop.add_timer(start + 20ms, [&] { order.push_back(21); });
  loop.add_timer(start + 20ms, [&] { order.push_back(22); });
  EXPECT_FALSE(loop.run_ready());
  clock.advance(15ms);
  loop.run_ready();
  EXPECT_EQ(order, (std::vector<int>{1}));
  clock.advance(100ms);
  loop.run_ready();
  EXPECT_EQ(order, (std::vector<int>{1, 21, 22, 3}));
}

TEST(EventLoop, ACancelledTimerNeverRuns) {
  ManualSteadyClock clock;
  EventLoop loop(clock);
  bool ran = false;
  const auto id = loop.add_timer(clock.now() + 5ms, [&] { ran = true; });
  EXPECT_TRUE(loop.cancel_timer(id));
  EXPECT_FALSE(loop.cancel_timer(id));
  clock.advance(1s);
  loop.run_ready();
  EXPECT_FALSE(ran);
}

TEST(EventLoop, ThousandsOfCancelledTimersLeaveTheOthersInOrder) {
  ManualSteadyClock clock;
  EventLoop loop(clock);
  std::vector<int> order;
  std::vector<EventLoop::TimerId> cancelled;
  for (int i = 0; i < 5000; ++i) {
    // Every fifth one stays: due in reverse order of adding.
    const auto due = clock.now() + Millis{10'000 - i};
    if (i % 5 == 0) {
      loop.add_timer(due, [&order, i] { order.push_back(i); });
    } else {
      cancelled.push_back(loop.add_timer(due, [] { ADD_FAILURE() << "a cancelled timer ran"; }));
    }
  }
  for (const auto id : cancelled) EXPECT_TRUE(loop.cancel_timer(id));
  clock.advance(20s);
  loop.run_ready();
  ASSERT_EQ(order.size(), 1000u);
  EXPECT_TRUE(std::is_sorted(order.rbegin(), order.rend())) << "due order, not adding order";
}

TEST(EventLoop, ATimerAddedByADueTimerRunsInALaterPass) {
  ManualSteadyClock clock;
  EventLoop loop(clock);
  std::vector<int> order;
  loop.add_timer(clock.now(), [&] {
    order.push_back(1);
    loop.add_timer(clock.now(), [&] { order.push_back(2); });
  });
  loop.run_ready();
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
}

TEST(EventLoop, WorkPostedFromOtherThreadsRunsOnTheLoopInOrder) {
  EventLoop loop;
  std::vector<int> order;
  std::thread::id ran_on;
  bool done = false;
  std::thread poster([&] {
    for (int i = 0; i < 100; ++i) loop.post([&order, i] { order.push_back(i); });
    loop.post([&] {
      ran_on = std::this_thread::get_id();
      done = true;
    });
  });
  loop.run_until([&] { return done; });
  poster.join();
  EXPECT_EQ(ran_on, std::this_thread::get_id());
  ASSERT_EQ(order.size(), 100u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(order[static_cast<std::size_t>(i)], i);
}

TEST(EventLoop, WaitsForARealTimerWithoutSpinning) {
  EventLoop loop;
  bool fired = false;
  const auto start = std::chrono::steady_clock::now();
  loop.add_timer(loop.now() + 30ms, [&] { fired = true; });
  loop.run_until([&] { return fired; });
  EXPECT_GE(std::chrono::steady_clock::now() - start, 30ms);
}

class Counting final : public FdHandler {
 public:
  void on_ready(int fd, std::uint32_t events) override {
    std::uint64_t value = 0;
    EXPECT_EQ(::read(fd, &value, sizeof value), static_cast<ssize_t>(sizeof value));
    EXPECT_NE(events & EPOLLIN, 0u);
    total += value;
  }
  std::uint64_t total = 0;
};

TEST(EventLoop, AWatchedDescriptorWakesItAndAnUnwatchedOneNoMore) {
  EventLoop loop;
  const int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ASSERT_GE(fd, 0);
  Counting handler;
  ASSERT_TRUE(loop.watch(fd, EPOLLIN, handler));
  std::thread writer([fd] {
    const std::uint64_t three = 3;
    EXPECT_EQ(::write(fd, &three, sizeof three), static_cast<ssize_t>(sizeof three));
  });
  loop.run_until([&] { return handler.total == 3; });
  writer.join();
  loop.unwatch(fd);
  const std::uint64_t one = 1;
  ASSERT_EQ(::write(fd, &one, sizeof one), static_cast<ssize_t>(sizeof one));
  EXPECT_FALSE(loop.run_ready());
  EXPECT_EQ(handler.total, 3u);
  ::close(fd);
}

// The kernel drops a closed descriptor from the epoll set by itself; a new one that gets its
// number is then watched as new, not refused as an unknown change.
TEST(EventLoop, ADescriptorClosedWithoutUnwatchLeavesItsNumberFreeToWatchAgain) {
  EventLoop loop;
  Counting handler;
  const int closed = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ASSERT_GE(closed, 0);
  ASSERT_TRUE(loop.watch(closed, EPOLLIN, handler));
  ::close(closed);
  const int reused = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  ASSERT_EQ(reused, closed) << "the lowest free number is reused";
  ASSERT_TRUE(loop.watch(reused, EPOLLIN, handler));
  const std::uint64_t two = 2;
  ASSERT_EQ(::write(reused, &two, sizeof two), static_cast<ssize_t>(sizeof two));
  EXPECT_TRUE(loop.run_ready());
  EXPECT_EQ(handler.total, 2u);
  loop.unwatch(reused);
  ::close(reused);
}

TEST(EventLoop, ResumedCoroutinesRunFromTheLoopNotFromTheWaker) {
  ManualSteadyClock clock;
  EventLoop loop(clock);
  std::vector<std::string> steps;
  struct Park {
    EventLoop& loop;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> handle) {
      loop.resume_soon(Resumable::capture(handle));
    }
    void await_resume() const noexcept {}
  };
  auto parker = [&]() -> Task<void> {
    steps.push_back("parked");
    co_await Park{loop};
    steps.push_back("resumed");
  };
  spawn(parker());
  steps.push_back("spawner goes on");
  loop.run_ready();
  EXPECT_EQ(steps, (std::vector<std::string>{"parked", "spawner goes on", "resumed"}));
}

}  // namespace
}  // namespace ic::event
