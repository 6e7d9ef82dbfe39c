// Rate-limits a repeated warning: during an outage every retry fails the same way, and one
// warning per interval (with how many were held back) says all the others would.
//
//   if (const auto verdict = limiter.next("debit_unavailable"); verdict.warn) {
//     log.warn("...", {{"suppressed", verdict.suppressed}});
//   }
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic::app {

// Thread-safety: next() may be called concurrently. Ownership: the clock is borrowed.
class WarningLimiter {
 public:
  static constexpr Millis kDefaultInterval{10'000};

  explicit WarningLimiter(const Clock& clock, Millis interval = kDefaultInterval)
      : clock_(clock), interval_(interval) {}

  struct Verdict {
    bool warn = true;              // this occurrence is the interval's warning
    std::uint64_t suppressed = 0;  // when warning: occurrences held back since the last one
  };
  [[nodiscard]] Verdict next(std::string_view key);

 private:
  struct Entry {
    Instant last_warned{};
    std::uint64_t suppressed = 0;
    bool warned = false;
  };
  const Clock& clock_;
  const Millis interval_;
  Mutex mutex_;
  std::map<std::string, Entry, std::less<>> entries_ GUARDED_BY(mutex_);
};

}  // namespace ic::app
