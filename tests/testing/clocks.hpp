// The clocks and the recording sleeper every test shares (ic_testing_core: they need only
// core/): time that moves only when a test says so, thread-safe because the concurrency tests
// share them.
#pragma once

#include <atomic>
#include <cstdint>
#include <vector>

#include "core/async_sleeper.hpp"
#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic::testing {

using namespace std::chrono_literals;

// Reads `start` until moved by advance() or set(). A clock built with a `step` also moves on by
// `step` after every reading, for code under test whose readings must each be told apart.
class ManualClock final : public Clock {
 public:
  static constexpr Instant kDefaultStart{Millis{1'764'460'800'000}};  // 2025-11-30T00:00:00Z

  explicit ManualClock(Instant start = kDefaultStart, Millis step = Millis{0})
      : now_ms_(start.time_since_epoch().count()), step_ms_(step.count()) {}
  Instant now() const override {
    return Instant{Millis{step_ms_ == 0 ? now_ms_.load() : now_ms_.fetch_add(step_ms_)}};
  }
  void advance(Millis by) { now_ms_ += by.count(); }
  void set(Instant to) { now_ms_ = to.time_since_epoch().count(); }

 private:
  mutable std::atomic<std::int64_t> now_ms_;
  const std::int64_t step_ms_;
};

// The event loop's clock, moved by hand: timers fall due only when a test says so.
class ManualSteadyClock final : public MonotonicClock {
 public:
  SteadyInstant now() const override { return SteadyInstant{Millis{now_ms_.load()}}; }
  void advance(Millis by) { now_ms_ += by.count(); }

 private:
  std::atomic<std::int64_t> now_ms_{1'000'000};
};

// The instant the tests' records and clocks start from, one spelling for every file (files of
// one test target are compiled together, so a file-local copy would be a redefinition).
inline constexpr Instant t0 = ManualClock::kDefaultStart;

// Another clock's reading plus a fixed offset: a machine whose wall clock is skewed.
class SkewedClock final : public Clock {
 public:
  SkewedClock(const Clock& truth, Millis offset) : truth_(truth), offset_(offset) {}
  Instant now() const override { return truth_.now() + offset_; }

 private:
  const Clock& truth_;
  Millis offset_;
};

// A sleeper (blocking, and on a loop) that returns at once and records every wait asked of it.
// Given a ManualClock, it moves that clock on by each wait, so time passes only while the code
// under test sleeps. A stop already requested ends a wait on a loop unslept, as the loop's would.
class RecordingSleeper final : public Sleeper, public AsyncSleeper {
 public:
  RecordingSleeper() = default;
  explicit RecordingSleeper(ManualClock& moves) : clock_(&moves) {}
  void sleep_for(Millis duration) override {
    {
      MutexLock lock(mutex_);
      sleeps_.push_back(duration);
    }
    if (clock_ != nullptr) clock_->advance(duration);
  }
  Task<bool> sleep_for(Millis duration, std::stop_token stop) override {
    if (stop.stop_requested()) co_return false;
    sleep_for(duration);
    co_return true;
  }
  std::vector<Millis> sleeps() const {
    MutexLock lock(mutex_);
    return sleeps_;
  }

 private:
  ManualClock* clock_ = nullptr;
  mutable Mutex mutex_;
  std::vector<Millis> sleeps_ GUARDED_BY(mutex_);
};

}  // namespace ic::testing
