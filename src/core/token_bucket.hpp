// A token bucket: `rate` tokens per second, holding at most `burst`. Paces calls to a rate
// agreed with a dependency (BANK_MAX_RPS). A rate of 0 means unlimited.
//
//   TokenBucket bucket(50.0, 50.0, clock);
//   if (Millis wait = bucket.try_take(); wait > 0ms) sleep(wait);  // then try again
//
// Pure: it never waits. Thread-safety: try_take may be called concurrently. Ownership: the
// clock is borrowed.
#pragma once

#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic {

class TokenBucket {
 public:
  // burst below 1 holds one token; a negative or NaN rate counts as 0 (unlimited).
  TokenBucket(double rate_per_second, double burst, const Clock& clock);

  // Takes one token and answers 0, or takes nothing and answers how long until one is there.
  [[nodiscard]] Millis try_take();
  [[nodiscard]] bool unlimited() const { return rate_ <= 0.0; }

 private:
  void refill(Instant now) REQUIRES(mutex_);

  const double rate_;
  const double burst_;
  const Clock& clock_;
  Mutex mutex_;
  double tokens_ GUARDED_BY(mutex_);
  Instant last_ GUARDED_BY(mutex_);
};

}  // namespace ic
