// Retry-After (RFC 9110 §10.2.3): delta-seconds ("6") or an HTTP-date in the IMF-fixdate form
// ("Sun, 06 Nov 1994 08:49:37 GMT"), read from a reply the server sent under load (429, 503).
#pragma once

#include <optional>
#include <string_view>

#include "core/time.hpp"

namespace ic::http {

// The longest pause a Retry-After can impose: a value further out is cut to this, so that a
// wrong header cannot park a process for hours (the circuit's probes take over from there).
inline constexpr Millis kMaxRetryAfter{300'000};

// How long from `now` the server asks us to wait, in [0, kMaxRetryAfter]. nullopt for anything
// that is not one of the two forms (an empty, negative, fractional or garbled value, another
// date format): a bad header is ignored, never an error. A date in the past is 0.
[[nodiscard]] std::optional<Millis> parse_retry_after(std::string_view value, Instant now);

// An IMF-fixdate; nullopt unless it is exactly that form and a real date.
[[nodiscard]] std::optional<Instant> parse_imf_fixdate(std::string_view text);

}  // namespace ic::http
