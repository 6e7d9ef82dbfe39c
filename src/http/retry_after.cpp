#include "http/retry_after.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <cstdint>

namespace ic::http {
namespace {

std::optional<int> digits(std::string_view text) {
  if (text.empty() || !std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; })) {
    return std::nullopt;
  }
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::string_view trimmed(std::string_view text) {
  while (!text.empty() && (text.front() == ' ' || text.front() == '\t')) text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\t')) text.remove_suffix(1);
  return text;
}

}  // namespace

std::optional<Instant> parse_imf_fixdate(std::string_view text) {
  // "Sun, 06 Nov 1994 08:49:37 GMT": fixed layout, 29 characters.
  if (text.size() != 29 || text.substr(3, 2) != ", " || text.substr(25) != " GMT" ||
      text[7] != ' ' || text[11] != ' ' || text[16] != ' ' || text[19] != ':' || text[22] != ':') {
    return std::nullopt;
  }
  static constexpr std::array<std::string_view, 12> kMonths = {
      "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"};
  const auto month_name = text.substr(8, 3);
  unsigned month = 0;
  while (month < kMonths.size() && kMonths[month] != month_name) ++month;
  const auto day = digits(text.substr(5, 2));
  const auto year = digits(text.substr(12, 4));
  const auto hour = digits(text.substr(17, 2));
  const auto minute = digits(text.substr(20, 2));
  const auto second = digits(text.substr(23, 2));
  if (month == kMonths.size() || !day || !year || !hour || !minute || !second || *hour > 23 ||
      *minute > 59 || *second > 60) {
    return std::nullopt;
  }
  using namespace std::chrono;
  const year_month_day date{std::chrono::year{*year}, std::chrono::month{month + 1},
                            std::chrono::day{static_cast<unsigned>(*day)}};
  if (!date.ok()) return std::nullopt;
  return Instant{sys_days{date} + hours{*hour} + minutes{*minute} + seconds{*second}};
}

std::optional<Millis> parse_retry_after(std::string_view value, Instant now) {
  value = trimmed(value);
  if (value.empty()) return std::nullopt;
  if (value.front() >= '0' && value.front() <= '9') {
    // Delta-seconds; a number too long for an int is certainly beyond the cap.
    if (!std::ranges::all_of(value, [](char c) { return c >= '0' && c <= '9'; })) {
      return std::nullopt;
    }
    const auto seconds = digits(value);
    if (!seconds) return kMaxRetryAfter;
    return std::min<Millis>(std::chrono::seconds{*seconds}, kMaxRetryAfter);
  }
  const auto at = parse_imf_fixdate(value);
  if (!at) return std::nullopt;
  return std::clamp<Millis>(*at - now, Millis{0}, kMaxRetryAfter);
}

}  // namespace ic::http
