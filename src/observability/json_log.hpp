// Structured logging: one JSON object per line, {"ts","level","msg", then the caller's fields}.
// Values are escaped by nlohmann-json (invalid UTF-8 is replaced, never emitted raw), a string
// value longer than kMaxLogValueBytes is cut there and marked "...(<n> bytes)", and values of
// secret-looking keys are redacted (see is_redacted_key) as a defence against a careless call.
// A key given twice keeps its first value, so no line carries a duplicate key.
//
//   Logger log{LogLevel::Info};                        // stderr
//   log.info("claim decided", {{"chargeId", id}, {"outcome", "ACQUIRED"}, {"fence", 3}});
//   if (log.enabled(LogLevel::Debug)) log.debug("detail", {{"dump", expensive()}});
#pragma once

#include <atomic>
#include <chrono>
#include <concepts>
#include <cstdint>
#include <expected>
#include <functional>
#include <initializer_list>
#include <iosfwd>
#include <string>
#include <string_view>
#include <variant>

#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic::observability {

enum class LogLevel : std::uint8_t { Debug, Info, Warn, Error };

inline constexpr std::size_t kMaxLogValueBytes = 1024;

[[nodiscard]] std::string_view to_string(LogLevel level) noexcept;

// Accepts debug, info, warn (or warning), error, case-insensitively; for LOG_LEVEL validation.
// The error names the accepted values.
[[nodiscard]] std::expected<LogLevel, std::string> parse_log_level(std::string_view text);

// True for keys whose values are never logged. Case-insensitive substring deny-list:
//   secret, password, passwd, token, authorization, credential, cookie, apikey, api_key,
//   privatekey, private_key, signature
// (keys longer than 64 bytes are redacted too), with an explicit allow-list of exact keys that
// only look secret:
//   claimToken — the idempotency record's fencing token; it authorises nothing outside our own
//   conditional writes and is what an operator needs to match a log line to a record.
[[nodiscard]] bool is_redacted_key(std::string_view key) noexcept;

// One caller key/value. A view: the key and string values must outlive the log call, which
// holds for temporaries in the call's initializer list.
class LogField {
 public:
  using Value = std::variant<std::string_view, std::int64_t, std::uint64_t, double, bool>;

  LogField(std::string_view key, std::string_view value) : key_(key), value_(value) {}
  LogField(std::string_view key, const char* value) : key_(key), value_(std::string_view{value}) {}
  LogField(std::string_view key, const std::string& value)
      : key_(key), value_(std::string_view{value}) {}
  LogField(std::string_view key, bool value) : key_(key), value_(value) {}
  template <std::signed_integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, char>) LogField(std::string_view key, T value)
      : key_(key), value_(static_cast<std::int64_t>(value)) {}
  template <std::unsigned_integral T>
  requires(!std::same_as<T, bool> && !std::same_as<T, char>) LogField(std::string_view key, T value)
      : key_(key), value_(static_cast<std::uint64_t>(value)) {}
  template <std::floating_point T>
  LogField(std::string_view key, T value) : key_(key), value_(static_cast<double>(value)) {}

  [[nodiscard]] std::string_view key() const noexcept { return key_; }
  [[nodiscard]] const Value& value() const noexcept { return value_; }

 private:
  std::string_view key_;
  Value value_;
};

// Receives one complete line, newline included. Called under the logger's lock, so a sink
// needs no locking of its own as long as only one Logger writes to it.
using LogSink = std::function<void(std::string_view line)>;

[[nodiscard]] LogSink stderr_sink();
// The stream must outlive every logger using the sink.
[[nodiscard]] LogSink ostream_sink(std::ostream& out);

// Thread-safety: every member may be called from any thread; each line reaches the sink in one
// call and lines never interleave. A filtered-out call costs one relaxed atomic load (plus
// building the field views the caller passes). Ownership: borrows the clock, which stamps "ts"
// and must outlive the logger.
class Logger {
 public:
  explicit Logger(LogLevel min_level, LogSink sink = stderr_sink(),
                  const Clock& clock = real_clock());

  [[nodiscard]] bool enabled(LogLevel level) const noexcept {
    return level >= min_level_.load(std::memory_order_relaxed);
  }
  void set_level(LogLevel level) noexcept { min_level_.store(level, std::memory_order_relaxed); }

  void log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields = {});
  void debug(std::string_view msg, std::initializer_list<LogField> fields = {}) {
    log(LogLevel::Debug, msg, fields);
  }
  void info(std::string_view msg, std::initializer_list<LogField> fields = {}) {
    log(LogLevel::Info, msg, fields);
  }
  void warn(std::string_view msg, std::initializer_list<LogField> fields = {}) {
    log(LogLevel::Warn, msg, fields);
  }
  void error(std::string_view msg, std::initializer_list<LogField> fields = {}) {
    log(LogLevel::Error, msg, fields);
  }

 private:
  std::atomic<LogLevel> min_level_;
  LogSink sink_ GUARDED_BY(sink_mutex_);
  const Clock& clock_;
  Mutex sink_mutex_;
};

// "2026-11-30T08:15:02.123Z": RFC 3339, UTC, milliseconds (truncated).
[[nodiscard]] std::string format_rfc3339_millis(std::chrono::system_clock::time_point t);

}  // namespace ic::observability
