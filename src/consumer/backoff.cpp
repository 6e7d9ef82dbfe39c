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
  // The jitter is rounded to the nearest second, `after` itself up: a 1 s re-check stays 1 s
  // (ceil(1.05 s) made nearly every one 2 s, and a copy settled a second late), while nothing
  // comes back before `after`.
  const auto jittered = std::chrono::round<std::chrono::seconds>(after + Millis{extra});
  return std::clamp(std::max(visibility_seconds(after), jittered), std::chrono::seconds{0},
                    kMaxVisibility);
}

}  // namespace ic::consumer
