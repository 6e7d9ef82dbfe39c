// The process's real clock and sleeper.
#include <thread>

#include "core/time.hpp"

namespace ic {
namespace {

class SystemClock final : public Clock {
 public:
  [[nodiscard]] Instant now() const override {
    return std::chrono::floor<Millis>(std::chrono::system_clock::now());
  }
};

class SteadyClock final : public MonotonicClock {
 public:
  [[nodiscard]] SteadyInstant now() const override { return std::chrono::steady_clock::now(); }
};

class ThreadSleeper final : public Sleeper {
 public:
  void sleep_for(Millis duration) override { std::this_thread::sleep_for(duration); }
};

}  // namespace

const Clock& real_clock() {
  static const SystemClock clock;
  return clock;
}

Sleeper& real_sleeper() {
  static ThreadSleeper sleeper;
  return sleeper;
}

const MonotonicClock& real_monotonic_clock() {
  static const SteadyClock clock;
  return clock;
}

}  // namespace ic
