#include "application/hold_waiter.hpp"

#include <algorithm>

namespace ic::application {
namespace {

constexpr Millis kLongestSlice{100};

}  // namespace

Task<bool> LoopWaiter::wait_until(Instant at) {
  const unsigned long seen = wakeups_;
  while (!stop_.stop_requested()) {
    const Millis remaining = at - clock_.now();
    if (remaining <= Millis{0} || wakeups_ != seen) co_return true;
    const event::Wake wake =
        co_await changed_.wait(loop_.now() + std::min(remaining, kLongestSlice), stop_.get_token());
    if (wake == event::Wake::Stopped) co_return false;
  }
  co_return false;
}

Task<bool> LoopWaiter::wait_in(event::WaitQueue& line) {
  co_return co_await line.wait(std::nullopt, stop_.get_token()) == event::Wake::Notified;
}

void LoopWaiter::notify_all() {
  ++wakeups_;
  changed_.notify_all();
}

void LoopWaiter::request_stop() {
  stop_.request_stop();
}

}  // namespace ic::application
