// Delay arithmetic of the container: receive-error backoff and RetryLater visibility.
// Pure functions of a uniform sample `u` in [0, 1), so tests can pin the bounds exactly.
#pragma once

#include <chrono>
#include <cstdint>
#include <random>

#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic::consumer {

struct ExponentialBackoff {
  Millis base{100};
  Millis cap{20000};
};

// "Equal jitter": d = min(cap, base * 2^attempt), delay in [d/2, d]. Half of the delay is
// guaranteed so that a fleet hitting one failing endpoint really slows down, the other half is
// random so that it does not retry in lockstep. `attempt` counts from 0.
[[nodiscard]] Millis backoff_delay(const ExponentialBackoff& policy, int attempt, double u);

// The visibility timeout for RetryLater{after}: after + u * after * jitter_ratio, rounded UP to
// whole seconds (SQS granularity; rounding down could return the message before `after`),
// clamped to [0, 12 h].
[[nodiscard]] std::chrono::seconds retry_visibility(Millis after, double jitter_ratio, double u);

// Rounds a duration up to whole seconds, clamped to [0, 12 h].
[[nodiscard]] std::chrono::seconds visibility_seconds(Millis duration);

// A seeded uniform source shared by the container's threads.
// Thread-safety: uniform01() may be called concurrently.
class Jitter {
 public:
  explicit Jitter(std::uint64_t seed) : engine_(seed) {}
  [[nodiscard]] double uniform01();

 private:
  Mutex mutex_;
  std::mt19937_64 engine_ GUARDED_BY(mutex_);
};

}  // namespace ic::consumer
