#include "app/telemetry/warning_limiter.hpp"

namespace ic::app {

WarningLimiter::Verdict WarningLimiter::next(std::string_view key) {
  const Instant now = clock_.now();
  MutexLock lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) it = entries_.emplace(std::string(key), Entry{}).first;
  Entry& entry = it->second;
  if (entry.warned && now - entry.last_warned < interval_) {
    ++entry.suppressed;
    return {.warn = false, .suppressed = 0};
  }
  const Verdict verdict{.warn = true, .suppressed = entry.suppressed};
  entry = {.last_warned = now, .suppressed = 0, .warned = true};
  return verdict;
}

}  // namespace ic::app
