// One timer thread that runs periodic ticks (the per-delivery heartbeats) and can cancel a
// tick synchronously: after cancel() returns, that tick is not running and never runs again.
// Ticks run one at a time on the timer thread, so a tick must be short (one store write and
// one queue call); heartbeats are due only every half lease, so they rarely queue up.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <thread>

#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic::consumer {

// Thread-safety: schedule/cancel may be called concurrently from any thread except from inside
// a tick (cancel from a tick would wait for itself). Ownership: the scheduler owns the ticks.
class HeartbeatScheduler {
 public:
  // Returns the delay until its next run, measured from the end of this one; nullopt (or a
  // throw) stops it.
  using Tick = std::function<std::optional<Millis>()>;
  using Id = std::uint64_t;

  HeartbeatScheduler();
  ~HeartbeatScheduler();
  HeartbeatScheduler(const HeartbeatScheduler&) = delete;
  HeartbeatScheduler& operator=(const HeartbeatScheduler&) = delete;

  // First run after `first_delay`, then after whatever delay each run returns.
  [[nodiscard]] Id schedule(Millis first_delay, Tick tick);
  // Removes the tick; waits while it is running.
  void cancel(Id id);

 private:
  using SteadyClock = std::chrono::steady_clock;
  struct Entry {
    SteadyClock::time_point due;
    Tick tick;
  };

  void run();

  Mutex mutex_;
  CondVar changed_;
  std::map<Id, Entry> entries_ GUARDED_BY(mutex_);
  Id next_id_ GUARDED_BY(mutex_) = 1;
  Id running_ GUARDED_BY(mutex_) = 0;  // 0 when no tick runs
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace ic::consumer
