#include "observability/json_log.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

#include "core/overloaded.hpp"

namespace ic::observability {
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

// Printable ASCII without a quote or backslash: a JSON string as it is. Ids, codes and
// messages, nearly every value, are such text.
bool plain(std::string_view text) {
  return std::ranges::all_of(text,
                             [](char c) { return c >= ' ' && c <= '~' && c != '"' && c != '\\'; });
}

// Anything else is escaped by nlohmann-json, which also replaces invalid UTF-8.
void append_string(std::string& out, std::string_view text) {
  if (plain(text)) {
    out.push_back('"');
    out.append(text);
    out.push_back('"');
    return;
  }
  out.append(nlohmann::json(std::string(text))
                 .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

void append_value(std::string& out, const LogField::Value& value) {
  std::visit(Overloaded{[&](std::string_view v) {
                          if (v.size() <= kMaxLogValueBytes) {
                            append_string(out, v);
                          } else {
                            append_string(out, bounded(v));
                          }
                        },
                        [&](bool v) { out.append(v ? "true" : "false"); },
                        [&](double v) { out.append(nlohmann::json(v).dump()); },
                        // fmt::format_int, not format_to into a back_inserter: with clang
                        // that instantiates a vformat_to Debian's libfmt does not export.
                        [&](auto v) { out.append(fmt::format_int(v).c_str()); }},
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

// The line is written directly rather than built as a JSON document and dumped: at info level
// that document was most of a log call's cost, and a charge logs three lines.
void Logger::log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  if (!enabled(level)) return;
  std::string text;
  text.reserve(256);
  text.append(R"({"ts":")").append(format_rfc3339_millis(clock_.now()));
  text.append(R"(","level":")").append(to_string(level)).append(R"(","msg":)");
  append_string(text, msg);
  std::vector<std::string> keys;
  keys.reserve(fields.size());
  for (const LogField& field : fields) {
    // Appending rather than inserting the prefix: GCC 12 -O2 raises a false -Wrestrict on
    // std::string::insert(0, ...).
    std::string key;
    if (contains(kReservedKeys, field.key())) key.push_back('_');
    key.append(field.key());
    if (contains(keys, key)) continue;  // a line never carries a key twice: the first stays
    text.push_back(',');
    append_string(text, key);
    text.push_back(':');
    if (is_redacted_key(key)) {
      append_string(text, kRedacted);
    } else {
      append_value(text, field.value());
    }
    keys.push_back(std::move(key));
  }
  text.append("}\n");
  MutexLock lock(sink_mutex_);
  sink_(text);
}

}  // namespace ic::observability
