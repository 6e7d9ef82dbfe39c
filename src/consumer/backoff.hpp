// Delay arithmetic of the container: receive-error backoff and RetryLater visibility.
// retry_visibility is a pure function of a uniform sample `u` in [0, 1), so tests can pin the
// bounds exactly.
#pragma once

#include <chrono>

#include "core/time.hpp"

namespace ic::consumer {

// The receive-error backoff, with equal jitter (core/backoff.hpp): delay in [d/2, d] where
// d = min(cap, base * 2^failures).
struct ExponentialBackoff {
  Millis base{100};
  Millis cap{20000};
};

// The visibility timeout for RetryLater{after}: after + u * after * jitter_ratio in whole
// seconds (SQS granularity), never less than `after` rounded UP (rounding down could return the
// message before `after`); the jitter itself is rounded to the nearest second. Clamped to
// [0, 12 h].
[[nodiscard]] std::chrono::seconds retry_visibility(Millis after, double jitter_ratio, double u);

// Rounds a duration up to whole seconds, clamped to [0, 12 h].
[[nodiscard]] std::chrono::seconds visibility_seconds(Millis duration);

}  // namespace ic::consumer
