#include "application/recheck_policy.hpp"

#include <algorithm>
#include <vector>

namespace ic::application {

void EffectDurations::record(Millis duration) {
  MutexLock lock(mutex_);
  samples_[count_ % kWindow] = duration;
  ++count_;
}

std::optional<Millis> EffectDurations::p90() const {
  std::vector<Millis> window;
  {
    MutexLock lock(mutex_);
    if (count_ < kMinSamples) return std::nullopt;
    window.assign(samples_.begin(),
                  samples_.begin() + static_cast<std::ptrdiff_t>(std::min(count_, kWindow)));
  }
  const auto rank = window.begin() + static_cast<std::ptrdiff_t>(window.size() * 9 / 10);
  std::nth_element(window.begin(), rank, window.end());
  return *rank;
}

Millis recheck_delay(const RecheckInput& input) {
  const Millis remaining_lease = std::max(Millis{0}, input.lease_until - input.now);
  if (!input.typical_effect) return remaining_lease;
  // A heartbeat moves lease_until forward, so this underestimates the holder's elapsed time;
  // the doubling below absorbs that and any effect slower than the estimate.
  const Millis elapsed = std::max(Millis{0}, input.now - (input.lease_until - input.lease));
  Millis delay = std::max(kMinRecheck, *input.typical_effect - elapsed);
  for (int earlier = 1; earlier < input.receive_count && delay < remaining_lease; ++earlier) {
    delay *= 2;
  }
  return std::min(delay, remaining_lease);
}

}  // namespace ic::application
