// Structured logging: one JSON object per line, {"ts","level","msg", then the caller's fields}.
// Values are escaped by nlohmann-json (invalid UTF-8 is replaced, never emitted raw), a string
// value longer than kMaxLogValueBytes is cut there and marked "...(<n> bytes)", and values of
// secret-looking keys are redacted (see is_redacted_key) as a defence against a careless call.
// A key given twice keeps its first value, so no line carries a duplicate key. While a trace
// context is current on the calling thread (core/trace_context.hpp) the line ends with its
// "traceparent".
//
// Asynchronous: a line is formatted on the caller's thread and queued in a bounded buffer that
// one writer thread drains to the sink, so a sink that stops taking lines (stderr a pipe nobody
// reads) never blocks a caller, the event loop included. A line that finds the buffer full is
// dropped and counted; the next line that fits is preceded by one "log lines dropped" warning
// with the count. Destruction flushes for at most LogBuffer::flush_timeout and then leaves the
// writer behind, so a stuck sink cannot hold the process's exit either.
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
#include <memory>
#include <string>
#include <string_view>
#include <thread>
#include <variant>

#include "core/time.hpp"
#include "observability/metrics.hpp"

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

// Receives complete lines, each ending in its newline, on the logger's writer thread, one call
// at a time: as many whole lines as fit in PIPE_BUF bytes together, or a single longer line.
// It may block (that only fills the buffer), but it must not throw. A logger the sink
// outlasted at its destruction keeps the sink (and whatever it captured) until its last call
// returns. The writer thread blocks SIGPIPE, so a write to a pipe nobody reads fails with EPIPE.
using LogSink = std::function<void(std::string_view lines)>;

// write(2) on fd 2, each write at most PIPE_BUF bytes, so a write to a pipe is atomic and a
// blocking one waits only for that much room; no stdio lock is held while it waits (exit()
// takes those). On a non-blocking descriptor that is full it polls for room. The rest of a
// call is given up when the descriptor reports an error (EPIPE: the reader left).
[[nodiscard]] LogSink stderr_sink();
// The stream must outlive every logger using the sink (including one left behind by a stuck
// sink: a test's stream is read after flush()).
[[nodiscard]] LogSink ostream_sink(std::ostream& out);

// What the logger holds for its writer. A line counts against both limits from the moment it
// is queued until the sink has taken it.
struct LogBuffer {
  std::size_t max_lines = 65'536;
  std::size_t max_bytes = std::size_t{8} << 20U;
  // How long destruction waits for the sink to take what is queued.
  Millis flush_timeout{2'000};
};

// Thread-safety: every member may be called from any thread; each line reaches the sink whole
// within one call, in the order the calls took the buffer's lock, and lines never interleave. A
// filtered-out call costs one relaxed atomic load (plus building the field views the caller
// passes). Ownership: borrows the clock, which stamps "ts" on the callers' threads and must
// outlive the logger; owns the writer thread.
class Logger {
 public:
  explicit Logger(LogLevel min_level, LogSink sink = stderr_sink(),
                  const Clock& clock = real_clock(), LogBuffer buffer = {});
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

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

  // Waits until the sink has taken every line queued before the call, at most `timeout`;
  // false when it had not by then.
  [[nodiscard]] bool flush(Millis timeout);

  // Lines dropped because the buffer was full, since construction.
  [[nodiscard]] std::uint64_t dropped_lines() const noexcept;
  // From now on every dropped line also increments `counter` (nullptr: no longer). The counter
  // must stay valid until it is replaced or the logger destroyed.
  void count_drops(Counter* counter) noexcept;

  struct Queue;  // shared with the writer thread, which may outlive the logger

 private:
  std::atomic<LogLevel> min_level_;
  const Clock& clock_;
  std::shared_ptr<Queue> queue_;
  std::thread writer_;
};

// "2026-11-30T08:15:02.123Z": RFC 3339, UTC, milliseconds (truncated).
[[nodiscard]] std::string format_rfc3339_millis(std::chrono::system_clock::time_point t);

}  // namespace ic::observability
