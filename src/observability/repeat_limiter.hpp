// Rate limit for a warning that repeats while a dependency stays down (an unreachable SQS makes
// every receive and every retried AWS attempt warn: 25 lines in 10 s from one receiver). The
// first line of a kind goes out, then at most one per window; the one that goes out says how
// many were held back since the last, so the count of failures is kept and the log is not
// flooded. The metrics still count every failure.
//
//   RepeatLimiter limiter{30s};
//   if (auto held = limiter.admit(code)) log.warn("receive failed", {{"suppressed", *held}, ...});
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic::observability {

// The window of the consumer's repeated warnings: a line per kind every 30 s is enough to see
// an outage go on, and keeps a minute of it to a handful of lines.
inline constexpr Millis kRepeatWindow{30'000};

// Thread-safety: admit() may be called from any thread. Ownership: borrows the clock, which
// must outlive the limiter.
class RepeatLimiter {
 public:
  // Keys kept at most; past it the oldest state is dropped (the next line of a dropped key
  // goes out at once). Keys are meant to be few: an error code, a service and operation.
  static constexpr std::size_t kMaxKeys = 256;

  explicit RepeatLimiter(Millis window, const Clock& clock = real_clock())
      : window_(window), clock_(clock) {}

  // nullopt: hold this line back. Otherwise let it out, with the number of lines of `key` held
  // back since the previous one that went out (0 for the first).
  [[nodiscard]] std::optional<std::uint64_t> admit(std::string_view key);

 private:
  struct Entry {
    Instant last_out;
    std::uint64_t held = 0;
  };
  const Millis window_;
  const Clock& clock_;
  Mutex mutex_;
  std::map<std::string, Entry, std::less<>> entries_ GUARDED_BY(mutex_);
};

}  // namespace ic::observability
