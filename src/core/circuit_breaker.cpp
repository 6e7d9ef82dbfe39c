#include "core/circuit_breaker.hpp"

#include <algorithm>
#include <utility>

#include "core/backoff.hpp"

namespace ic {
namespace {

constexpr int kNoProbe = -1;

CircuitConfig sane(CircuitConfig config) {
  config.window = std::max(config.window, 1);
  config.min_calls = std::clamp(config.min_calls, 1, config.window);
  config.failure_percent = std::clamp(config.failure_percent, 1, 100);
  config.probe_min = std::max(config.probe_min, Millis{1});
  config.probe_max = std::max(config.probe_max, config.probe_min);
  return config;
}

}  // namespace

CircuitBreaker::CircuitBreaker(std::string dependency, CircuitConfig config, const Clock& clock,
                               Random& random, CircuitListener* listener)
    : dependency_(std::move(dependency)),
      config_(sane(config)),
      clock_(clock),
      random_(random),
      listener_(listener),
      outcomes_(static_cast<std::size_t>(config_.window), false) {}

CircuitPermit CircuitBreaker::try_acquire() {
  std::vector<Transition> transitions;
  CircuitPermit permit;
  {
    MutexLock lock(mutex_);
    permit.generation = generation_;
    if (state_ == CircuitState::Closed) {
      permit.admission = Admission::Allowed;
    } else if (state_ == CircuitState::Open && !probe_reserved_) {
      const Instant now = clock_.now();
      if (now >= next_probe_at_) {
        move_to(CircuitState::HalfOpen, now, transitions);
        permit = {Admission::Probe, generation_};
      }
    }
  }
  publish(transitions, kNoProbe);
  return permit;
}

CircuitPermit CircuitBreaker::try_acquire_reserved() {
  std::vector<Transition> transitions;
  CircuitPermit permit;
  {
    MutexLock lock(mutex_);
    permit.generation = generation_;
    if (state_ == CircuitState::Closed) {
      probe_reserved_ = false;
      permit.admission = Admission::Allowed;
    } else if (state_ == CircuitState::Open && probe_reserved_) {
      const Instant now = clock_.now();
      if (now >= next_probe_at_) {
        probe_reserved_ = false;
        move_to(CircuitState::HalfOpen, now, transitions);
        permit = {Admission::Probe, generation_};
      }
    }
  }
  publish(transitions, kNoProbe);
  return permit;
}

void CircuitBreaker::record(const CircuitPermit& permit, CallOutcome outcome, bool keep_probe) {
  if (permit.admission == Admission::Rejected) return;
  if (outcome == CallOutcome::Ignored) {
    abandon(permit);
    return;
  }
  std::vector<Transition> transitions;
  int probe_result = kNoProbe;
  {
    MutexLock lock(mutex_);
    // A call admitted before the last transition tells nothing about the current spell.
    if (permit.generation != generation_) return;
    const Instant now = clock_.now();
    const bool failed = outcome == CallOutcome::Failure;
    if (permit.admission == Admission::Probe) {
      probe_result = failed ? 0 : 1;
      if (failed) {
        ++failed_probes_;
        next_probe_at_ = now + probe_delay();
        probe_reserved_ = keep_probe;
        move_to(CircuitState::Open, now, transitions);
      } else {
        move_to(CircuitState::Closed, now, transitions);
      }
    } else if (state_ == CircuitState::Closed) {
      count(failed, now, transitions);
    }
  }
  publish(transitions, probe_result);
}

void CircuitBreaker::observe(CallOutcome outcome) {
  if (outcome == CallOutcome::Ignored) return;
  std::vector<Transition> transitions;
  {
    MutexLock lock(mutex_);
    if (state_ != CircuitState::Closed) return;
    count(outcome == CallOutcome::Failure, clock_.now(), transitions);
  }
  publish(transitions, kNoProbe);
}

void CircuitBreaker::count(bool failed, Instant now, std::vector<Transition>& out) {
  std::vector<bool>::reference slot = outcomes_[next_slot_];
  if (calls_ == config_.window) {
    if (slot) --failures_;
  } else {
    ++calls_;
  }
  slot = failed;
  if (failed) ++failures_;
  next_slot_ = (next_slot_ + 1) % outcomes_.size();
  if (window_trips()) open(now, out);
}

void CircuitBreaker::abandon(const CircuitPermit& permit) {
  if (permit.admission != Admission::Probe) return;
  std::vector<Transition> transitions;
  {
    MutexLock lock(mutex_);
    if (permit.generation != generation_ || state_ != CircuitState::HalfOpen) return;
    // Back to open with the probe due at once: nothing was learnt, so nothing is delayed.
    const Instant now = clock_.now();
    next_probe_at_ = now;
    probe_reserved_ = false;
    move_to(CircuitState::Open, now, transitions);
  }
  publish(transitions, kNoProbe);
}

void CircuitBreaker::release_reservation() {
  MutexLock lock(mutex_);
  probe_reserved_ = false;
}

CircuitSnapshot CircuitBreaker::snapshot() const {
  MutexLock lock(mutex_);
  return {.state = state_,
          .opened_at = opened_at_,
          .next_probe_at = next_probe_at_,
          .failed_probes = failed_probes_,
          .probe_reserved = probe_reserved_};
}

void CircuitBreaker::open(Instant now, std::vector<Transition>& out) {
  opened_at_ = now;
  failed_probes_ = 0;
  probe_reserved_ = false;
  next_probe_at_ = now + config_.probe_min;
  move_to(CircuitState::Open, now, out);
}

void CircuitBreaker::move_to(CircuitState to, Instant now, std::vector<Transition>& out) {
  if (to == CircuitState::Closed) {
    // A fresh window: the failures of the outage must not reopen it at the first new one.
    std::fill(outcomes_.begin(), outcomes_.end(), false);
    calls_ = failures_ = 0;
    next_slot_ = 0;
    failed_probes_ = 0;
    probe_reserved_ = false;
  }
  ++generation_;
  if (to != state_) out.push_back({state_, to, now});
  state_ = to;
}

// Doubling per failed probe with equal jitter, so a fleet of processes that opened together
// drifts apart; never below probe_min, so a probe is never sooner than the first one was.
Millis CircuitBreaker::probe_delay() {
  const Millis jittered =
      backoff_delay(failed_probes_, config_.probe_min, config_.probe_max, Jitter::Equal, random_);
  return std::clamp(jittered, config_.probe_min, config_.probe_max);
}

bool CircuitBreaker::window_trips() const {
  return calls_ >= config_.min_calls &&
         static_cast<long>(failures_) * 100 >= static_cast<long>(config_.failure_percent) * calls_;
}

void CircuitBreaker::publish(const std::vector<Transition>& transitions, int probe_result) {
  if (listener_ == nullptr) return;
  if (probe_result != kNoProbe) listener_->on_probe(dependency_, probe_result == 1);
  for (const Transition& t : transitions) listener_->on_transition(dependency_, t.from, t.to, t.at);
}

}  // namespace ic
