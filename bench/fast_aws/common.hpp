// What the SQS and DynamoDB halves share below their replies: the account and region their
// ARNs and URLs name, the clocks, and reading a number that must be the whole of a text.
#pragma once

#include <charconv>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string_view>

namespace ic::bench::fast_aws {

using Steady = std::chrono::steady_clock;

inline constexpr std::string_view kAccount = "000000000000";
inline constexpr std::string_view kRegion = "us-east-1";

inline std::int64_t epoch_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// `text` read as a T, or nullopt unless all of it is the number (std::from_chars's syntax).
template <typename T>
std::optional<T> whole_number(std::string_view text) {
  T value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

}  // namespace ic::bench::fast_aws
