// A circuit breaker for one dependency (docs/design.md §3, "Dependency outages"): a count-based
// sliding window of the last `window` outcomes opens it once it holds at least `min_calls`
// calls of which at least `failure_percent` % failed. While open nothing is admitted but one
// probe at a time, first `probe_min` after opening, then after each failed probe twice as long
// (equal jitter, never below probe_min) up to `probe_max`. A successful probe closes it.
//
//   CircuitBreaker debit("debit", config, clock, random, &listener);
//   const CircuitPermit permit = debit.try_acquire();
//   if (permit.admission == Admission::Rejected) return park_until(debit.next_probe_at());
//   debit.record(permit, call_failed ? CallOutcome::Failure : CallOutcome::Success);
//
// The probe's caller may keep its turn across a failed probe (record(..., keep_probe = true)):
// the circuit reopens but only that caller (try_acquire_reserved) may probe next, so the one
// message being probed with is retried instead of a new one being fetched.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/random.hpp"
#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic {

enum class CircuitState { Closed, Open, HalfOpen };

// "closed", "open", "half_open": the value of metric labels and log fields.
[[nodiscard]] constexpr std::string_view to_string(CircuitState state) {
  switch (state) {
    case CircuitState::Closed:
      return "closed";
    case CircuitState::Open:
      return "open";
    case CircuitState::HalfOpen:
      return "half_open";
  }
  return "unknown";
}

struct CircuitConfig {
  int window = 20;           // outcomes remembered (count-based sliding window)
  int min_calls = 10;        // fewer outcomes in the window never open it
  int failure_percent = 50;  // opens at failures * 100 >= failure_percent * calls
  Millis probe_min{1000};    // first probe this long after opening
  Millis probe_max{15000};   // cap of the doubling probe delay
};

// Failure: the dependency did not answer usefully (Retryable, Throttling, timeout). Success: it
// answered, even with a refusal (a 422 is a working bank). Ignored: says nothing about the
// dependency (our own misconfiguration, a call cut short by shutdown).
enum class CallOutcome { Success, Failure, Ignored };

enum class Admission { Allowed, Probe, Rejected };

// What try_acquire handed out; pass it back to record() or abandon().
struct CircuitPermit {
  Admission admission = Admission::Rejected;
  std::uint64_t generation = 0;  // outcomes of calls admitted before a transition are dropped
};

// Told about each transition and probe, outside the breaker's lock.
class CircuitListener {
 public:
  virtual ~CircuitListener() = default;
  virtual void on_transition(std::string_view /*dependency*/, CircuitState /*from*/,
                             CircuitState /*to*/, Instant /*at*/) {}
  virtual void on_probe(std::string_view /*dependency*/, bool /*success*/) {}
};

struct CircuitSnapshot {
  CircuitState state = CircuitState::Closed;
  Instant opened_at{};      // start of the current open spell (open or half-open)
  Instant next_probe_at{};  // when open: the earliest probe
  int failed_probes = 0;    // in the current spell
  bool probe_reserved = false;
};

// Thread-safety: every member may be called concurrently (one mutex; the listener is called
// after it is released). Ownership: clock, random and listener are borrowed.
class CircuitBreaker {
 public:
  CircuitBreaker(std::string dependency, CircuitConfig config, const Clock& clock, Random& random,
                 CircuitListener* listener = nullptr);

  // Closed: Allowed. Open and a probe is due and not reserved: Probe (now half-open). Else
  // Rejected.
  [[nodiscard]] CircuitPermit try_acquire();
  // As try_acquire, but for the caller whose failed probe kept its turn: Probe once due.
  [[nodiscard]] CircuitPermit try_acquire_reserved();
  // The outcome of an admitted call. A probe's Success closes the circuit, its Failure reopens
  // it with a longer delay (keeping the turn for this caller when keep_probe), Ignored hands
  // the turn back as abandon() does.
  void record(const CircuitPermit& permit, CallOutcome outcome, bool keep_probe = false);
  // The permit was not used (or a reserved turn is given up): a probe turn goes back to the
  // circuit, due at once.
  void abandon(const CircuitPermit& permit);
  // The outcome of a call that was not gated (a final write that must be tried whatever the
  // circuit says): counted in the window while closed, ignored otherwise.
  void observe(CallOutcome outcome);
  // Gives up a turn kept by record(..., keep_probe = true) without probing again.
  void release_reservation();

  [[nodiscard]] CircuitSnapshot snapshot() const;
  [[nodiscard]] CircuitState state() const { return snapshot().state; }
  [[nodiscard]] const std::string& dependency() const { return dependency_; }
  [[nodiscard]] const CircuitConfig& config() const { return config_; }

 private:
  struct Transition {
    CircuitState from;
    CircuitState to;
    Instant at;
  };
  void count(bool failed, Instant now, std::vector<Transition>& out) REQUIRES(mutex_);
  void open(Instant now, std::vector<Transition>& out) REQUIRES(mutex_);
  void move_to(CircuitState to, Instant now, std::vector<Transition>& out) REQUIRES(mutex_);
  [[nodiscard]] Millis probe_delay() REQUIRES(mutex_);
  [[nodiscard]] bool window_trips() const REQUIRES(mutex_);
  void publish(const std::vector<Transition>& transitions, int probe_result);

  const std::string dependency_;
  const CircuitConfig config_;
  const Clock& clock_;
  Random& random_;
  CircuitListener* listener_;

  mutable Mutex mutex_;
  CircuitState state_ GUARDED_BY(mutex_) = CircuitState::Closed;
  std::uint64_t generation_ GUARDED_BY(mutex_) = 0;
  std::vector<bool> outcomes_ GUARDED_BY(mutex_);  // ring of the window, true = failure
  std::size_t next_slot_ GUARDED_BY(mutex_) = 0;
  int calls_ GUARDED_BY(mutex_) = 0;
  int failures_ GUARDED_BY(mutex_) = 0;
  Instant opened_at_ GUARDED_BY(mutex_){};
  Instant next_probe_at_ GUARDED_BY(mutex_){};
  int failed_probes_ GUARDED_BY(mutex_) = 0;
  bool probe_reserved_ GUARDED_BY(mutex_) = false;
};

}  // namespace ic
