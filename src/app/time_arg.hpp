// The `--since` argument of `list`: an instant, or a duration back from now; and durations.
#pragma once

#include <expected>
#include <string>
#include <string_view>

#include "core/time.hpp"

namespace ic::app {

// "<n>s", "<n>m", "<n>h" or "<n>d"; the error says what form is expected.
[[nodiscard]] std::expected<Millis, std::string> parse_duration(std::string_view text);

// "2026-11-30" (midnight UTC), "2026-11-30T08:15:00Z", or "<n>m", "<n>h", "<n>d" before `now`.
// The error says what form is expected.
[[nodiscard]] std::expected<Instant, std::string> parse_since(std::string_view text, Instant now);

}  // namespace ic::app
