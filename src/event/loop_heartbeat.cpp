#include "event/loop_heartbeat.hpp"

namespace ic::event {

LoopHeartbeat::LoopHeartbeat(EventLoop& loop, Millis interval, LoopObserver* observer)
    : loop_(loop),
      interval_(interval),
      observer_(observer),
      last_beat_(loop.now().time_since_epoch().count()) {}

LoopHeartbeat::~LoopHeartbeat() {
  if (timer_) loop_.cancel_timer(*timer_);
}

void LoopHeartbeat::start() {
  const SteadyInstant now = loop_.now();
  last_beat_.store(now.time_since_epoch().count(), std::memory_order_release);
  arm(now + interval_);
}

void LoopHeartbeat::arm(SteadyInstant due) {
  timer_ = loop_.add_timer(due, [this, due] { beat(due); });
}

void LoopHeartbeat::beat(SteadyInstant due) {
  const SteadyInstant now = loop_.now();
  if (observer_ != nullptr) observer_->on_lag(now - due);
  last_beat_.store(now.time_since_epoch().count(), std::memory_order_release);
  // From now, not from `due`: after a stall the next beat measures the loop afresh instead of
  // firing a burst of overdue ones.
  arm(now + interval_);
}

}  // namespace ic::event
