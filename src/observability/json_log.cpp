#include "observability/json_log.hpp"

#include <fmt/format.h>
#include <poll.h>
#include <pthread.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <climits>
#include <csignal>
#include <deque>
#include <nlohmann/json.hpp>
#include <ostream>
#include <utility>
#include <vector>

#include "core/overloaded.hpp"
#include "core/thread_guard.hpp"
#include "core/trace_context.hpp"

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

namespace {

// One complete line; the trace context of the calling task is appended when `with_trace`.
std::string format_line(std::chrono::system_clock::time_point now, LogLevel level,
                        std::string_view msg, std::initializer_list<LogField> fields,
                        bool with_trace = true) {
  std::string text;
  text.reserve(256);
  text.append(R"({"ts":")").append(format_rfc3339_millis(now));
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
  // Every line written while a charge's trace is current carries it, whoever logs it.
  if (const auto trace = current_traceparent();
      with_trace && !trace.empty() && !contains(keys, "traceparent")) {
    text.append(R"(,"traceparent":)");
    append_string(text, trace);
  }
  text.append("}\n");
  return text;
}

}  // namespace

LogSink stderr_sink() {
  return [](std::string_view lines) {
    while (!lines.empty()) {
      const ssize_t n =
          ::write(STDERR_FILENO, lines.data(), std::min<std::size_t>(lines.size(), PIPE_BUF));
      if (n >= 0) {
        lines.remove_prefix(static_cast<std::size_t>(n));
        continue;
      }
      if (errno == EINTR) continue;
      if (errno != EAGAIN && errno != EWOULDBLOCK) return;  // EPIPE: nobody reads any more
      // Non-blocking and full: wait for room rather than spin.
      pollfd ready{.fd = STDERR_FILENO, .events = POLLOUT, .revents = 0};
      if (::poll(&ready, 1, -1) < 0 && errno != EINTR) return;
      if ((ready.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) return;
    }
  };
}

LogSink ostream_sink(std::ostream& out) {
  return [&out](std::string_view line) {
    out.write(line.data(), static_cast<std::streamsize>(line.size()));
    out.flush();
  };
}

// How long the writer lets lines gather after writing a batch: the most a line waits in the
// buffer behind a steady stream, and at most 100 wake-ups a second.
constexpr Millis kLinger{10};

// Hands `lines` to `sink` as few calls as whole lines allow: each call at most PIPE_BUF bytes
// (one write(2), atomic on a pipe, so lines of other processes on the same pipe never cut into
// ours), unless it is a single longer line. Order is kept. A sink that throws loses that call's
// lines, never the writer.
void write_batched(const LogSink& sink, const std::deque<std::string>& lines) {
  std::string chunk;
  auto hand_over = [&](std::string_view text) {
    (void)run_guarded("log-writer", nullptr, [&] { sink(text); });
  };
  for (const std::string& line : lines) {
    if (!chunk.empty() && chunk.size() + line.size() > PIPE_BUF) {
      hand_over(chunk);
      chunk.clear();
    }
    if (line.size() > PIPE_BUF) {
      hand_over(line);
    } else {
      if (chunk.empty()) chunk.reserve(PIPE_BUF);
      chunk.append(line);
    }
  }
  if (!chunk.empty()) hand_over(chunk);
}

// Owned jointly by the logger and its writer: a writer stuck in the sink when the logger is
// destroyed keeps it (and the sink) until its call returns.
struct Logger::Queue {
  Queue(LogSink s, LogBuffer b) : sink(std::move(s)), limits(b) {}

  const LogSink sink;  // called by the writer only
  const LogBuffer limits;
  Mutex mutex;
  CondVar work;      // lines queued, or stopping: the writer waits on it
  CondVar progress;  // the sink took lines, or the writer ended: flush() waits on it
  std::deque<std::string> lines GUARDED_BY(mutex);
  // Held lines (queued and the batch the writer is writing), their bytes, and totals.
  std::size_t held GUARDED_BY(mutex) = 0;
  std::size_t held_bytes GUARDED_BY(mutex) = 0;
  std::uint64_t queued GUARDED_BY(mutex) = 0;
  std::uint64_t written GUARDED_BY(mutex) = 0;
  std::uint64_t unreported_drops GUARDED_BY(mutex) = 0;
  bool idle GUARDED_BY(mutex) = false;  // the writer waits for a caller's notify
  bool stopping GUARDED_BY(mutex) = false;
  bool ended GUARDED_BY(mutex) = false;
  std::atomic<std::uint64_t> dropped{0};
  std::atomic<Counter*> drop_counter{nullptr};

  void push(std::string line) REQUIRES(mutex) {
    ++held;
    held_bytes += line.size();
    ++queued;
    lines.push_back(std::move(line));
  }

  // The writer thread: takes everything queued at once, so callers wait on the lock for a swap
  // at most, never for the sink. After a batch it lingers for kLinger before looking again, so
  // a steady stream of lines costs a wake-up per interval rather than one per line.
  void drain() {
    std::deque<std::string> batch;
    MutexLock lock(mutex);
    while (true) {
      idle = true;
      work.wait(mutex, [this]() REQUIRES(mutex) { return !lines.empty() || stopping; });
      idle = false;
      if (lines.empty()) break;
      batch.swap(lines);
      lock.unlock();
      write_batched(sink, batch);
      std::size_t bytes = 0;
      for (const std::string& line : batch) bytes += line.size();
      const std::size_t count = batch.size();
      batch.clear();  // frees the lines outside the lock
      lock.lock();
      held -= count;
      held_bytes -= bytes;
      written += count;
      progress.notify_all();
      (void)work.wait_for(mutex, kLinger, [this]() REQUIRES(mutex) { return stopping; });
    }
    ended = true;
    progress.notify_all();
  }
};

Logger::Logger(LogLevel min_level, LogSink sink, const Clock& clock, LogBuffer buffer)
    : min_level_(min_level),
      clock_(clock),
      queue_(std::make_shared<Queue>(std::move(sink), buffer)),
      // The writer owns a share of the queue, never the logger: it may outlive it.
      writer_([queue = queue_] {
        // A sink writing to a pipe whose reader left gets EPIPE rather than the process
        // a SIGPIPE (sent to the writing thread, so blocking it here is enough).
        sigset_t pipe_signal;
        sigemptyset(&pipe_signal);
        sigaddset(&pipe_signal, SIGPIPE);
        pthread_sigmask(SIG_BLOCK, &pipe_signal, nullptr);
        queue->drain();
      }) {}

Logger::~Logger() {
  bool ended = false;
  {
    MutexLock lock(queue_->mutex);
    queue_->stopping = true;
    queue_->work.notify_one();
    ended = queue_->progress.wait_for(queue_->mutex, queue_->limits.flush_timeout,
                                      [this]() REQUIRES(queue_->mutex) { return queue_->ended; });
  }
  // A writer still in the sink after the flush timeout is left to it: joining would make the
  // process's exit wait for a reader that may never come back.
  if (ended) {
    writer_.join();
  } else {
    writer_.detach();
  }
}

bool Logger::flush(Millis timeout) {
  MutexLock lock(queue_->mutex);
  const std::uint64_t target = queue_->queued;
  return queue_->progress.wait_for(
      queue_->mutex, timeout, [&]() REQUIRES(queue_->mutex) { return queue_->written >= target; });
}

std::uint64_t Logger::dropped_lines() const noexcept {
  return queue_->dropped.load(std::memory_order_relaxed);
}

void Logger::count_drops(Counter* counter) noexcept {
  queue_->drop_counter.store(counter, std::memory_order_release);
}

// The line is written directly rather than built as a JSON document and dumped: at info level
// that document was most of a log call's cost.
void Logger::log(LogLevel level, std::string_view msg, std::initializer_list<LogField> fields) {
  if (!enabled(level)) return;
  std::string text = format_line(clock_.now(), level, msg, fields);
  Queue& queue = *queue_;
  MutexLock lock(queue.mutex);
  if (queue.held >= queue.limits.max_lines ||
      queue.held_bytes + text.size() > queue.limits.max_bytes) {
    ++queue.unreported_drops;
    queue.dropped.fetch_add(1, std::memory_order_relaxed);
    if (Counter* counter = queue.drop_counter.load(std::memory_order_acquire)) counter->inc();
    return;
  }
  // Only an idle writer needs waking; a lingering one looks again on its own.
  const bool wake = queue.idle && queue.lines.empty();
  if (queue.unreported_drops > 0) {
    // The sink took lines again (this one fits): say, in its place in the order, what is
    // missing. It may exceed the bounds by this one short line.
    queue.push(format_line(clock_.now(), LogLevel::Warn, "log lines dropped",
                           {{"dropped", std::exchange(queue.unreported_drops, 0)}},
                           /*with_trace=*/false));
  }
  queue.push(std::move(text));
  if (wake) queue.work.notify_one();
}

}  // namespace ic::observability
