// One timer thread that runs periodic ticks (the per-delivery heartbeats) and can cancel a
// tick synchronously: after cancel() returns, that tick is not running and never runs again.
// Ticks run one at a time on the timer thread, so a tick must be short (one store write and
// one queue call); heartbeats are due only every half lease, so they rarely queue up.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "core/time.hpp"

namespace ic::consumer {

// Thread-safety: schedule/cancel may be called concurrently from any thread except from inside
// a tick (cancel from a tick would wait for itself). Ownership: the scheduler owns the ticks.
class HeartbeatScheduler {
 public:
  using Tick = std::function<bool()>;  // returns false (or throws) to stop repeating
  using Id = std::uint64_t;

  HeartbeatScheduler();
  ~HeartbeatScheduler();
  HeartbeatScheduler(const HeartbeatScheduler&) = delete;
  HeartbeatScheduler& operator=(const HeartbeatScheduler&) = delete;

  // First run after `interval`, then every `interval` (measured from the end of a run) while
  // the tick returns true.
  [[nodiscard]] Id schedule(Millis interval, Tick tick);
  // Removes the tick; waits while it is running.
  void cancel(Id id);

 private:
  using SteadyClock = std::chrono::steady_clock;
  struct Entry {
    SteadyClock::time_point due;
    Millis interval;
    Tick tick;
  };

  void run();

  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<Id, Entry> entries_;  // guarded by mutex_
  Id next_id_ = 1;               // guarded by mutex_
  Id running_ = 0;               // guarded by mutex_; 0 when no tick runs
  bool stopping_ = false;        // guarded by mutex_
  std::thread thread_;
};

}  // namespace ic::consumer
