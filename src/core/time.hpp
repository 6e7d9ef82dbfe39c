// Time ports of every layer: the wall clock of the claim protocol (epoch milliseconds, as stored
// in the table) and sleeping. Injected, so tests control time without waiting.
#pragma once

#include <chrono>
#include <optional>

namespace ic {

using Millis = std::chrono::milliseconds;
using Instant = std::chrono::sys_time<Millis>;

// Source of "now": the wall clock (std::chrono::system_clock, truncated to milliseconds).
// It may step when NTP corrects it, which is right for what it is used for: lease arithmetic,
// record timestamps, log lines, SigV4 signing time and credential expiry, all compared with
// other machines' wall time. In-process timers (the event loop's) use MonotonicClock instead:
// their deadlines must not move when the wall clock is stepped.
// Thread-safety: now() may be called from any thread and never blocks.
// Ownership: injected by reference; the owner outlives every user.
class Clock {
 public:
  virtual ~Clock() = default;
  [[nodiscard]] virtual Instant now() const = 0;
};

// The monotonic clock of in-process timers (the event loop's): its readings never step, so a
// deadline set from it does not move when NTP corrects the wall clock. Injected, so tests of
// timer order move it by hand. Thread-safety and ownership: as Clock.
using SteadyInstant = std::chrono::steady_clock::time_point;
class MonotonicClock {
 public:
  virtual ~MonotonicClock() = default;
  [[nodiscard]] virtual SteadyInstant now() const = 0;
};

// Blocks the calling thread, for waits nothing needs to cut short (retry backoff, polling a
// table until it is ACTIVE). A wait that shutdown must interrupt uses a condition variable.
// Thread-safety: sleep_for() may be called concurrently from any thread.
// Ownership: injected by reference; the owner outlives every user.
class Sleeper {
 public:
  virtual ~Sleeper() = default;
  virtual void sleep_for(Millis duration) = 0;
};

// `t` as a system_clock time point, or nullopt when it lies outside what that clock holds
// (nanoseconds in 64 bits: roughly the years 1678 to 2261). Parsers of dates from outside the
// process convert through this, because converting such a date directly is signed overflow.
[[nodiscard]] inline std::optional<std::chrono::system_clock::time_point> to_system_time(
    std::chrono::sys_seconds t) {
  using std::chrono::system_clock;
  constexpr auto kEarliest =
      std::chrono::ceil<std::chrono::seconds>(system_clock::time_point::min());
  constexpr auto kLatest =
      std::chrono::floor<std::chrono::seconds>(system_clock::time_point::max());
  if (t < kEarliest || t > kLatest) return std::nullopt;
  return std::chrono::time_point_cast<system_clock::duration>(t);
}

// The real ones, alive for the whole process.
[[nodiscard]] const Clock& real_clock();
[[nodiscard]] Sleeper& real_sleeper();                       // std::this_thread::sleep_for
[[nodiscard]] const MonotonicClock& real_monotonic_clock();  // std::chrono::steady_clock

}  // namespace ic
