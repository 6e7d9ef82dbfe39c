#include "observability/json_log.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <iostream>
#include <nlohmann/json.hpp>

namespace ic::obs {
namespace {

constexpr std::array<std::string_view, 4> kLevelNames{"debug", "info", "warn", "error"};

constexpr std::array<std::string_view, 12> kDeniedKeyParts{
    "secret", "password", "passwd",  "token",      "authorization", "credential",
    "cookie", "apikey",   "api_key", "privatekey", "private_key",   "signature"};
constexpr std::array<std::string_view, 1> kAllowedKeys{"claimtoken"};

// Caller keys equal to these get a "_" prefix so a line never carries a duplicate key.
constexpr std::array<std::string_view, 3> kReservedKeys{"ts", "level", "msg"};

constexpr std::string_view kRedacted = "[REDACTED]";

std::string lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

bool contains(auto const& list, std::string_view value) {
  return std::ranges::find(list, value) != list.end();
}

// A value may carry input (a key a producer chose, a reply): none may make a line huge. The
// cut never splits a UTF-8 sequence, and the original length is kept.
std::string bounded(std::string_view value) {
  if (value.size() <= kMaxLogValueBytes) return std::string(value);
  std::size_t cut = kMaxLogValueBytes;
  while (cut > 0 && (static_cast<unsigned char>(value[cut]) & 0xC0) == 0x80) --cut;
  return fmt::format("{}...({} bytes)", value.substr(0, cut), value.size());
}

nlohmann::ordered_json to_json(const LogField::Value& value) {
  return std::visit(
      [](auto v) {
        if constexpr (std::same_as<decltype(v), std::string_view>) {
          return nlohmann::ordered_json(bounded(v));
        } else {
          return nlohmann::ordered_json(v);
        }
      },
      value);
}

}  // namespace

std::string_view to_string(LogLevel level) noexcept {
  return kLevelNames.at(static_cast<std::size_t>(level));
}

std::expected<LogLevel, std::string> parse_log_level(std::string_view text) {
  const std::string name = lower(text);
  if (name == "warning") return LogLevel::Warn;
  for (std::size_t i = 0; i < kLevelNames.size(); ++i) {
    if (name == kLevelNames.at(i)) return static_cast<LogLevel>(i);
  }
  return std::unexpected(
      fmt::format("unknown log level \"{}\" (expected debug, info, warn or error)", text));
}

bool is_redacted_key(std::string_view key) noexcept {
  std::array<char, 64> buffer{};
  if (key.size() > buffer.size()) return true;  // no real field name is this long; be safe
  std::ranges::transform(key, buffer.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  const std::string_view folded(buffer.data(), key.size());
  if (contains(kAllowedKeys, folded)) return false;
  return std::ranges::any_of(kDeniedKeyParts,
                             [&](std::string_view part) { return folded.contains(part); });
}

std::string format_rfc3339_millis(std::chrono::system_clock::time_point t) {
  using namespace std::chrono;
  const auto ms = floor<milliseconds>(t);
  const auto day = floor<days>(ms);
  const year_month_day date{day};
  const hh_mm_ss time{ms - day};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                     time.hours().count(), time.minutes().count(), time.seconds().count(),
                     time.subseconds().count());
}

LogSink stderr_sink() {
  return ostream_sink(std::cerr);
}

LogSink ostream_sink(std::ostream& out) {
  return [&out](std::string_view line) {
    out.write(line.data(), static_cast<std::streamsize>(line.size()));
    out.flush();
  };
}

Logger::Logger(LogLevel min_level, LogSink sink, const Clock& clock)
    : min_level_(min_level), sink_(std::move(sink)), clock_(clock) {}

void Logger::log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  if (!enabled(level)) return;
  nlohmann::ordered_json line;
  line["ts"] = format_rfc3339_millis(clock_.now());
  line["level"] = to_string(level);
  line["msg"] = std::string(msg);
  for (const LogField& field : fields) {
    // Appending rather than inserting the prefix: GCC 12 -O2 raises a false -Wrestrict on
    // std::string::insert(0, ...).
    std::string key;
    if (contains(kReservedKeys, field.key())) key.push_back('_');
    key.append(field.key());
    line[key] = is_redacted_key(key) ? nlohmann::ordered_json(kRedacted) : to_json(field.value());
  }
  std::string text = line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace);
  text.push_back('\n');
  MutexLock lock(sink_mutex_);
  sink_(text);
}

}  // namespace ic::obs
