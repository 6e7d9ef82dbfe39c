#include "core/token_bucket.hpp"

#include <algorithm>
#include <cmath>

namespace ic {

TokenBucket::TokenBucket(double rate_per_second, double burst, const Clock& clock)
    : rate_(rate_per_second > 0.0 ? rate_per_second : 0.0),
      burst_(burst >= 1.0 ? burst : 1.0),
      clock_(clock),
      tokens_(burst_),
      last_(clock.now()) {}

Millis TokenBucket::try_take() {
  if (unlimited()) return Millis{0};
  MutexLock lock(mutex_);
  refill(clock_.now());
  if (tokens_ >= 1.0) {
    tokens_ -= 1.0;
    return Millis{0};
  }
  const double missing_ms = (1.0 - tokens_) * 1000.0 / rate_;
  return Millis{std::max<std::int64_t>(1, static_cast<std::int64_t>(std::ceil(missing_ms)))};
}

void TokenBucket::refill(Instant now) {
  // A clock stepped back adds nothing (and takes nothing).
  if (now <= last_) return;
  const double elapsed_s = static_cast<double>((now - last_).count()) / 1000.0;
  tokens_ = std::min(burst_, tokens_ + elapsed_s * rate_);
  last_ = now;
}

}  // namespace ic
