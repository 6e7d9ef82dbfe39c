#include "observability/repeat_limiter.hpp"

#include <algorithm>

namespace ic::observability {

std::optional<std::uint64_t> RepeatLimiter::admit(std::string_view key) {
  const Instant now = clock_.now();
  MutexLock lock(mutex_);
  auto it = entries_.find(key);
  if (it == entries_.end()) {
    if (entries_.size() >= kMaxKeys) {
      entries_.erase(std::ranges::min_element(
          entries_, {}, [](const auto& entry) { return entry.second.last_out; }));
    }
    entries_.emplace(std::string(key), Entry{.last_out = now});
    return 0;
  }
  Entry& entry = it->second;
  // A wall clock stepped back counts as a window elapsed: a line late is better than none.
  if (now - entry.last_out < window_ && now >= entry.last_out) {
    ++entry.held;
    return std::nullopt;
  }
  const std::uint64_t held = entry.held;
  entry = Entry{.last_out = now};
  return held;
}

}  // namespace ic::observability
