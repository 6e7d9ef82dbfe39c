#include "consumer/backoff.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "consumer/queue_port.hpp"

namespace ic::consumer {

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

}  // namespace ic::consumer
