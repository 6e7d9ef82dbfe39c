#include "consumer/backoff.hpp"

#include <algorithm>
#include <cmath>

#include "consumer/queue_port.hpp"

namespace ic::consumer {

Millis backoff_delay(const ExponentialBackoff& policy, int attempt, double u) {
  // Doubling stops once past the cap, so large attempt counts cannot overflow.
  Millis ceiling = std::max(policy.base, Millis{1});
  for (int i = 0; i < attempt && ceiling < policy.cap; ++i) ceiling *= 2;
  ceiling = std::min(ceiling, policy.cap);
  const auto half = ceiling.count() / 2;
  const auto extra = static_cast<std::int64_t>(u * static_cast<double>(ceiling.count() - half));
  return Millis{half + extra};
}

std::chrono::seconds visibility_seconds(Millis duration) {
  const auto up = std::chrono::ceil<std::chrono::seconds>(duration);
  return std::clamp(up, std::chrono::seconds{0}, kMaxVisibility);
}

std::chrono::seconds retry_visibility(Millis after, double jitter_ratio, double u) {
  if (after <= Millis{0}) return std::chrono::seconds{0};
  // Past the 12 h cap the jitter no longer matters, and doubles beyond it need no care.
  if (after >= kMaxVisibility) return kMaxVisibility;
  const auto extra =
      static_cast<std::int64_t>(std::floor(u * jitter_ratio * static_cast<double>(after.count())));
  return visibility_seconds(after + Millis{extra});
}

double Jitter::uniform01() {
  MutexLock lock(mutex_);
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine_);
}

}  // namespace ic::consumer
