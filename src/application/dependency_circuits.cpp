#include "application/dependency_circuits.hpp"

#include <algorithm>
#include <utility>

namespace ic::application {
namespace {

// How often a paused receiver looks again at most: soon enough that intake resumes well within
// a second of a close, rare enough to cost nothing.
constexpr Millis kLongestRecheck{250};
constexpr Millis kShortestRecheck{10};

std::size_t index(Dependency dependency) {
  return static_cast<std::size_t>(dependency);
}

}  // namespace

DependencyCircuits::DependencyCircuits(CircuitConfig config, const Clock& clock, Random& random,
                                       HoldWaiter& waiter, CircuitObserver* observer)
    : clock_(clock),
      waiter_(waiter),
      observer_(observer),
      circuits_{
          CircuitBreaker(std::string(to_string(Dependency::Debit)), config, clock, random, this),
          CircuitBreaker(std::string(to_string(Dependency::Notify)), config, clock, random, this),
          CircuitBreaker(std::string(to_string(Dependency::Store)), config, clock, random, this)} {}

CircuitBreaker& DependencyCircuits::circuit(Dependency dependency) {
  return circuits_[index(dependency)];
}

const CircuitBreaker& DependencyCircuits::circuit(Dependency dependency) const {
  return circuits_[index(dependency)];
}

void DependencyCircuits::on_debit_closed(std::function<void()> callback) {
  MutexLock lock(mutex_);
  on_debit_closed_ = std::move(callback);
}

void DependencyCircuits::defer(Dependency dependency, Millis after) {
  if (after <= Millis{0}) return;
  {
    MutexLock lock(mutex_);
    Instant& until = not_before_[index(dependency)];
    until = std::max(until, clock_.now() + after);
  }
  if (observer_ != nullptr) observer_->on_retry_after(dependency, after);
}

std::optional<Millis> DependencyCircuits::deferred(Dependency dependency) const {
  MutexLock lock(mutex_);
  const Millis left = not_before_[index(dependency)] - clock_.now();
  if (left <= Millis{0}) return std::nullopt;
  return left;
}

Millis DependencyCircuits::park_delay(Dependency dependency) const {
  const CircuitBreaker& breaker = circuit(dependency);
  const Millis until_probe = breaker.snapshot().next_probe_at - clock_.now();
  return std::max(breaker.config().probe_min, until_probe);
}

void DependencyCircuits::probe_started() {
  MutexLock lock(mutex_);
  probe_receive_until_.reset();
}

consumer::IntakeDecision DependencyCircuits::before_receive() {
  const Instant now = clock_.now();
  const auto recheck_in = [&](Millis wait) {
    return std::clamp(wait, kShortestRecheck, kLongestRecheck);
  };
  if (auto left = deferred(Dependency::Debit)) {
    // The bank asked for a pause: a message received now could only be handed back.
    report_paused(true);
    return {.max_messages = 0, .recheck = recheck_in(*left)};
  }
  bool all_closed = true;
  bool turn_taken = false;
  std::optional<Instant> due;
  for (const Dependency gating : {Dependency::Store, Dependency::Debit}) {
    const CircuitSnapshot s = circuit(gating).snapshot();
    if (s.state == CircuitState::Closed) continue;
    all_closed = false;
    if (s.state == CircuitState::HalfOpen || s.probe_reserved) turn_taken = true;
    due = due ? std::max(*due, s.next_probe_at) : s.next_probe_at;
  }
  if (all_closed) {
    report_paused(false);
    return {};
  }
  report_paused(true);
  if (turn_taken || !due) return {.max_messages = 0, .recheck = kLongestRecheck};
  {
    MutexLock lock(mutex_);
    if (probe_receive_until_ && now < *probe_receive_until_) {
      return {.max_messages = 0, .recheck = kLongestRecheck};
    }
    if (now >= *due) {
      // Until the receive returns; after_receive shortens or clears it.
      probe_receive_until_ = Instant::max();
      return {.max_messages = 1, .recheck = kLongestRecheck, .probe = true};
    }
  }
  return {.max_messages = 0, .recheck = recheck_in(*due - now)};
}

void DependencyCircuits::after_receive(const consumer::IntakeDecision& decision,
                                       std::size_t received) {
  if (!decision.probe) return;
  MutexLock lock(mutex_);
  if (!probe_receive_until_) return;  // its message already took the probe turn
  if (received == 0) {
    probe_receive_until_.reset();
  } else {
    probe_receive_until_ = clock_.now() + kProbeReceiveExpiry;
  }
}

void DependencyCircuits::on_transition(std::string_view dependency, CircuitState from,
                                       CircuitState to, Instant at) {
  if (observer_ != nullptr) observer_->on_transition(dependency, from, to, at);
  if (to == CircuitState::Closed && dependency == to_string(Dependency::Debit)) {
    std::function<void()> callback;
    {
      MutexLock lock(mutex_);
      callback = on_debit_closed_;
    }
    if (callback) callback();
  }
}

void DependencyCircuits::on_probe(std::string_view dependency, bool success) {
  if (observer_ != nullptr) observer_->on_probe(dependency, success);
}

void DependencyCircuits::report_paused(bool paused) {
  {
    MutexLock lock(mutex_);
    if (paused_ == paused) return;
    paused_ = paused;
  }
  if (observer_ != nullptr) observer_->on_intake_paused(paused);
}

}  // namespace ic::application
