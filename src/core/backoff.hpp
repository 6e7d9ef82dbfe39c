// Exponential backoff, the one formula behind every retry delay: the AWS client's retries (full
// jitter), the container's receive errors (equal jitter) and the service's transient failures
// (no jitter here; the container jitters RetryLater itself).
//
//   const Millis d = backoff_delay(failures, 100ms, 20s, Jitter::Equal, random);
#pragma once

#include "core/random.hpp"
#include "core/time.hpp"

namespace ic {

// How much of the exponential ceiling d = min(cap, base * 2^attempt) is left to chance.
enum class Jitter {
  None,   // exactly d: deterministic, for callers whose delay is jittered further on
  Full,   // u * d, in [0, d]: spreads a fleet the most (the AWS SDKs' standard retry mode)
  Equal,  // d/2 + u * (d - d/2), in [d/2, d]: half is guaranteed so that a fleet hitting one
          // failing endpoint really slows down, the other half keeps it out of lockstep
};

// The delay before retry number `attempt` (counted from 0: attempt 0 waits about `base`).
// u is one random.uniform01() sample (not drawn for Jitter::None), clamped to [0, 1] with NaN
// read as 0, so a faulty source cannot push the delay outside the mode's bounds. A negative
// attempt counts as 0 and a negative base or cap as 0; doubling stops at the cap, so any
// attempt number is safe. Fractions of a millisecond are truncated.
[[nodiscard]] Millis backoff_delay(int attempt, Millis base, Millis cap, Jitter mode,
                                   Random& random = real_random());

}  // namespace ic
