// run_blocking: a task's result (or exception) on a blocking caller's thread, through the
// thread's own loop, and through a fresh loop when called from inside that loop's own run.
#include "event/run_blocking.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <thread>

#include "event/wait_queue.hpp"

namespace ic::event {
namespace {

using namespace std::chrono_literals;

Task<int> after_a_sleep(int value) {
  co_await sleep_for(*EventLoop::current(), 5ms);
  co_return value;
}

Task<void> fails() {
  co_await sleep_for(*EventLoop::current(), 1ms);
  throw std::runtime_error("failed");
}

TEST(RunBlocking, ReturnsTheResultOfATaskThatWaitsOnTheLoop) {
  EXPECT_EQ(run_blocking(after_a_sleep(7)), 7);
  EXPECT_EQ(run_blocking(after_a_sleep(8)), 8) << "the thread's loop serves again";
}

TEST(RunBlocking, RethrowsWhatTheTaskThrew) {
  EXPECT_THROW(run_blocking(fails()), std::runtime_error);
}

TEST(RunBlocking, ABlockingCallInsideARunningLoopGetsAFreshOne) {
  auto nested = []() -> Task<int> {
    const int inner = run_blocking(after_a_sleep(2));  // blocks the outer loop, never re-enters it
    const int later = co_await after_a_sleep(3);
    co_return inner + later;
  };
  const int outer = run_blocking(nested());
  EXPECT_EQ(outer, 5);
}

TEST(RunBlocking, EachThreadUsesItsOwnLoop) {
  int from_thread = 0;
  std::thread other([&] { from_thread = run_blocking(after_a_sleep(11)); });
  EXPECT_EQ(run_blocking(after_a_sleep(12)), 12);
  other.join();
  EXPECT_EQ(from_thread, 11);
}

}  // namespace
}  // namespace ic::event
