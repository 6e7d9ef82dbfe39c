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
  // A holder already past the estimate (its dependency slowed down, or the window still holds
  // faster effects) is looked at again after half its elapsed time: a copy is settled at most
  // about half an effect late however the latency shifted, and a hung holder costs a claim
  // request per 1.5x of its time rather than one a second. Doubling per delivery instead made
  // a 1 s -> 2 s -> 4 s schedule that settled a copy seconds late after a latency shift.
  // A heartbeat moves lease_until forward, so `elapsed` may underestimate: that only makes the
  // re-checks more frequent, never later.
  const Millis elapsed = std::max(Millis{0}, input.now - (input.lease_until - input.lease));
  const Millis delay = std::max({kMinRecheck, *input.typical_effect - elapsed, elapsed / 2});
  // In whole seconds, SQS's grain, rounded down: a re-check a fraction early costs one claim,
  // while rounded up (as the container rounds any other delay) a 2.3 s holder's 1.16 s became
  // 2 s and its copy settled 2 s after the final write.
  const Millis whole =
      std::max<Millis>(kMinRecheck, std::chrono::floor<std::chrono::seconds>(delay));
  return std::min(whole, remaining_lease);
}

}  // namespace ic::application
