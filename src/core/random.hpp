// Randomness for jitter: spreading retries so that a fleet does not act in lockstep. Not for
// secrets: fencing tokens come from OpenSSL's CSPRNG (app/system_adapters).
#pragma once

#include <cstdint>
#include <random>

#include "core/thread_annotations.hpp"

namespace ic {

// A uniform source. Implementations return a value in [0, 1); callers must still tolerate a
// faulty one (NaN, out of range) without leaving their own bounds (see backoff_delay).
// Thread-safety: uniform01() may be called concurrently from any thread.
// Ownership: injected by reference; the owner outlives every user.
class Random {
 public:
  virtual ~Random() = default;
  [[nodiscard]] virtual double uniform01() = 0;
};

// The process's source: a thread-local Mersenne Twister per thread, each seeded from
// std::random_device, so concurrent callers never contend. Alive for the whole process.
[[nodiscard]] Random& real_random();

// A reproducible source: one engine behind a mutex, so a seed fixes the sequence of values
// handed out (which thread gets which one depends on scheduling).
class SeededRandom final : public Random {
 public:
  explicit SeededRandom(std::uint64_t seed) : engine_(seed) {}
  [[nodiscard]] double uniform01() override;

 private:
  Mutex mutex_;
  std::mt19937_64 engine_ GUARDED_BY(mutex_);
};

}  // namespace ic
