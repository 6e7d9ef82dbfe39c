#include "core/aimd_limit.hpp"

#include <algorithm>
#include <cmath>

namespace ic {
namespace {

AimdConfig sane(AimdConfig config) {
  config.min = std::max(config.min, 1);
  config.max = std::max(config.max, config.min);
  if (!(config.backoff > 0.0 && config.backoff < 1.0)) config.backoff = 0.75;
  config.ramp = std::max(config.ramp, Millis{0});
  return config;
}

}  // namespace

AimdLimit::AimdLimit(AimdConfig config, const Clock& clock)
    : config_(sane(config)), clock_(clock), estimate_(static_cast<double>(config_.max)) {}

std::optional<AimdLimit::Ticket> AimdLimit::try_acquire() {
  MutexLock lock(mutex_);
  if (in_flight_ >= limit_at(clock_.now())) return std::nullopt;
  ++in_flight_;
  return Ticket{.epoch = epoch_};
}

void AimdLimit::release(Ticket ticket, Millis latency, bool failed) {
  MutexLock lock(mutex_);
  // Near the limit: an increase earned while most slots idle says nothing about capacity.
  const int limit = static_cast<int>(estimate_);
  const bool near_limit = 2 * in_flight_ >= limit;
  in_flight_ = std::max(in_flight_ - 1, 0);
  if (failed || latency >= config_.slow_call) {
    // One decrease per congestion event: the first sign of it from a call admitted at the
    // current level. Those admitted before the last decrease were sent at a higher level.
    if (ticket.epoch != epoch_) return;
    ++epoch_;
    estimate_ = std::max(static_cast<double>(config_.min), std::floor(estimate_ * config_.backoff));
    successes_ = 0;
    return;
  }
  if (!near_limit) return;
  if (++successes_ >= limit) {
    successes_ = 0;
    estimate_ = std::min(static_cast<double>(config_.max), estimate_ + 1.0);
  }
}

void AimdLimit::restart() {
  MutexLock lock(mutex_);
  // The failures that shrank the estimate were the outage, not the bank's capacity: start over
  // from the ceiling, and let the ramp (then AIMD) find the level. Calls still in flight were
  // admitted during the outage; a new epoch keeps their late failures from cutting the ramp.
  estimate_ = static_cast<double>(config_.max);
  ++epoch_;
  ramping_ = config_.ramp > Millis{0};
  ramp_start_ = clock_.now();
  successes_ = 0;
}

int AimdLimit::limit() const {
  MutexLock lock(mutex_);
  return limit_at(clock_.now());
}

int AimdLimit::in_flight() const {
  MutexLock lock(mutex_);
  return in_flight_;
}

double AimdLimit::estimate() const {
  MutexLock lock(mutex_);
  return estimate_;
}

std::optional<Instant> AimdLimit::next_growth() const {
  MutexLock lock(mutex_);
  const Instant now = clock_.now();
  const int aimd = std::clamp(static_cast<int>(estimate_), config_.min, config_.max);
  const int current = limit_at(now);
  if (!ramping_ || current >= aimd) return std::nullopt;
  // limit_at() reaches current + 1 once elapsed * (aimd - min) >= (current + 1 - min) * ramp.
  const double share =
      static_cast<double>(current + 1 - config_.min) / static_cast<double>(aimd - config_.min);
  const auto due = ramp_start_ + Millis{static_cast<Millis::rep>(
                                     std::ceil(share * static_cast<double>(config_.ramp.count())))};
  // At least a millisecond on: a rounding the other way must not make a caller spin.
  return std::max(due, now + Millis{1});
}

int AimdLimit::limit_at(Instant now) const {
  const int aimd = std::clamp(static_cast<int>(estimate_), config_.min, config_.max);
  if (!ramping_) return aimd;
  const auto elapsed = now - ramp_start_;
  if (elapsed >= config_.ramp) return aimd;
  if (elapsed <= Millis{0}) return config_.min;
  const double share =
      static_cast<double>(elapsed.count()) / static_cast<double>(config_.ramp.count());
  const int ramped = config_.min + static_cast<int>(share * (aimd - config_.min));
  return std::clamp(ramped, config_.min, aimd);
}

}  // namespace ic
