#include "application/hold_waiter.hpp"

#include <algorithm>

namespace ic::application {
namespace {

constexpr Millis kLongestSlice{100};

}  // namespace

bool ClockWaiter::wait_until(Instant at) {
  MutexLock lock(mutex_);
  const unsigned long seen = wakeups_;
  while (!stop_) {
    const Millis remaining = at - clock_.now();
    if (remaining <= Millis{0} || wakeups_ != seen) return true;
    changed_.wait_for(mutex_, std::min(remaining, kLongestSlice),
                      [&]() REQUIRES(mutex_) { return stop_ || wakeups_ != seen; });
  }
  return false;
}

void ClockWaiter::notify_all() {
  {
    MutexLock lock(mutex_);
    ++wakeups_;
  }
  changed_.notify_all();
}

void ClockWaiter::request_stop() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  changed_.notify_all();
}

bool ClockWaiter::stop_requested() const {
  MutexLock lock(mutex_);
  return stop_;
}

}  // namespace ic::application
