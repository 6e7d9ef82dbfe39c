// A HoldWaiter for tests on a ManualClock: each wait moves the clock to its deadline at once
// and is recorded, so a held probe's schedule can be read back without waiting; stop() makes
// every later wait answer "stopped".
#pragma once

#include <atomic>
#include <vector>

#include "application/hold_waiter.hpp"
#include "core/thread_annotations.hpp"
#include "testing/clocks.hpp"

namespace ic::testing {

class AdvancingWaiter final : public application::HoldWaiter {
 public:
  explicit AdvancingWaiter(ManualClock& clock) : clock_(clock) {}
  Task<bool> wait_until(Instant at) override {
    {
      MutexLock lock(mutex_);
      waits_.push_back(at);
    }
    if (stop_) co_return false;
    if (at > clock_.now()) clock_.set(at);
    co_return true;
  }
  void notify_all() override {}
  void request_stop() override { stop_ = true; }
  bool stop_requested() const override { return stop_; }
  std::vector<Instant> waits() const {
    MutexLock lock(mutex_);
    return waits_;
  }

 private:
  ManualClock& clock_;
  std::atomic<bool> stop_{false};
  mutable Mutex mutex_;
  std::vector<Instant> waits_ GUARDED_BY(mutex_);
};

}  // namespace ic::testing
