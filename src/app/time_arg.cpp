#include "app/time_arg.hpp"

#include <charconv>
#include <chrono>

#include "domain/charge.hpp"

namespace ic::app {
namespace {

using namespace std::chrono;

std::expected<int, std::string> digits(std::string_view text) {
  int value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 0) {
    return std::unexpected("not a number: " + std::string(text));
  }
  return value;
}

}  // namespace

std::expected<Millis, std::string> parse_duration(std::string_view text) {
  const std::string expected_form = "must be a duration like 30s, 90m, 24h or 7d";
  if (text.size() < 2 || std::string_view("smhd").find(text.back()) == std::string_view::npos) {
    return std::unexpected(expected_form);
  }
  auto amount = digits(text.substr(0, text.size() - 1));
  if (!amount) return std::unexpected(expected_form);
  const char unit = text.back();
  const seconds one = unit == 's'   ? seconds(1)
                      : unit == 'm' ? minutes(1)
                      : unit == 'h' ? hours(1)
                                    : days(1);
  return duration_cast<Millis>(one * *amount);
}

std::expected<Instant, std::string> parse_since(std::string_view text, Instant now) {
  const std::string expected_form =
      "must be YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ or a duration like 90m, 24h, 7d";
  if (text.size() >= 2 && std::string_view("mhd").find(text.back()) != std::string_view::npos) {
    auto back = parse_duration(text);
    if (!back) return std::unexpected(expected_form);
    return now - *back;
  }
  // The date part is validated as a due date is: a real calendar date.
  auto date = domain::DueDate::parse(text.substr(0, 10));
  if (!date) return std::unexpected(expected_form);
  Instant at = time_point_cast<Millis>(sys_days(date->date()));
  if (text.size() == 10) return at;
  if (text.size() != 20 || text[10] != 'T' || text[13] != ':' || text[16] != ':' ||
      text[19] != 'Z') {
    return std::unexpected(expected_form);
  }
  auto h = digits(text.substr(11, 2));
  auto m = digits(text.substr(14, 2));
  auto s = digits(text.substr(17, 2));
  if (!h || !m || !s || *h > 23 || *m > 59 || *s > 59) return std::unexpected(expected_form);
  return at + hours(*h) + minutes(*m) + seconds(*s);
}

}  // namespace ic::app
