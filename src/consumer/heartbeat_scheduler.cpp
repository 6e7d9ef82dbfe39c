#include "consumer/heartbeat_scheduler.hpp"

#include <algorithm>

namespace ic::consumer {

HeartbeatScheduler::HeartbeatScheduler() : thread_([this] { run(); }) {}

HeartbeatScheduler::~HeartbeatScheduler() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
}

HeartbeatScheduler::Id HeartbeatScheduler::schedule(Millis first_delay, Tick tick) {
  Id id = 0;
  {
    MutexLock lock(mutex_);
    id = next_id_++;
    const auto due = SteadyClock::now() + std::max(first_delay, Millis{1});
    // The timer sleeps until the earliest entry; a later one needs no wake-up (one context
    // switch per delivery saved: most deliveries share one interval, so each is the latest).
    const bool earliest =
        std::ranges::none_of(entries_, [due](const auto& item) { return item.second.due <= due; });
    entries_.emplace(id, Entry{due, std::move(tick)});
    if (!earliest) return id;
  }
  changed_.notify_all();
  return id;
}

void HeartbeatScheduler::cancel(Id id) {
  MutexLock lock(mutex_);
  entries_.erase(id);
  changed_.wait(mutex_, [&]() REQUIRES(mutex_) { return running_ != id; });
}

void HeartbeatScheduler::run() {
  MutexLock lock(mutex_);
  while (!stopping_) {
    auto next =
        std::ranges::min_element(entries_, {}, [](const auto& item) { return item.second.due; });
    if (next == entries_.end()) {
      changed_.wait(mutex_);
      continue;
    }
    if (const auto due = next->second.due; SteadyClock::now() < due) {
      // `due` is a copy: the entry may be erased while we wait.
      changed_.wait_until(mutex_, due);
      continue;
    }
    const Id id = next->first;
    running_ = id;
    std::optional<Millis> next_delay;
    {
      // A copy, because cancel() may erase the entry while it runs; destroyed before
      // running_ is cleared, since its captures may refer to the canceller's stack.
      Tick tick = next->second.tick;
      lock.unlock();
      try {
        next_delay = tick();
      } catch (...) {
        next_delay.reset();  // a broken tick stops repeating; it must not take the timer down
      }
    }
    lock.lock();
    running_ = 0;
    if (auto it = entries_.find(id); it != entries_.end()) {
      if (next_delay) {
        it->second.due = SteadyClock::now() + std::max(*next_delay, Millis{1});
      } else {
        entries_.erase(it);
      }
    }
    changed_.notify_all();
  }
}

}  // namespace ic::consumer
