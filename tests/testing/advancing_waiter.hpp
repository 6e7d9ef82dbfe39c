// A HoldWaiter for tests on a ManualClock: each wait moves the clock to its deadline at once
// and is recorded, so a held probe's schedule can be read back without waiting; stop() makes
// every later wait answer "stopped". A line it waits in (the bank pacer's) lives on the loop it
// was given, which the test runs its tasks on.
#pragma once

#include <stdexcept>
#include <stop_token>
#include <vector>

#include "application/hold_waiter.hpp"
#include "core/thread_annotations.hpp"
#include "testing/clocks.hpp"

namespace ic::testing {

class AdvancingWaiter final : public application::HoldWaiter {
 public:
  explicit AdvancingWaiter(ManualClock& clock, event::EventLoop* loop = nullptr)
      : clock_(clock), loop_(loop) {}
  Task<bool> wait_until(Instant at) override {
    {
      MutexLock lock(mutex_);
      waits_.push_back(at);
    }
    if (stop_.stop_requested()) co_return false;
    if (at > clock_.now()) clock_.set(at);
    co_return true;
  }
  void notify_all() override {}
  void request_stop() override { stop_.request_stop(); }
  bool stop_requested() const override { return stop_.stop_requested(); }
  event::EventLoop& loop() override {
    if (loop_ == nullptr) throw std::logic_error("AdvancingWaiter: made without a loop");
    return *loop_;
  }
  Task<bool> wait_in(event::WaitQueue& line) override {
    co_return co_await line.wait(std::nullopt, stop_.get_token()) == event::Wake::Notified;
  }
  std::vector<Instant> waits() const {
    MutexLock lock(mutex_);
    return waits_;
  }

 private:
  ManualClock& clock_;
  event::EventLoop* loop_;
  std::stop_source stop_;
  mutable Mutex mutex_;
  std::vector<Instant> waits_ GUARDED_BY(mutex_);
};

}  // namespace ic::testing
