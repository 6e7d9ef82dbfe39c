// The three circuits of a process (debit, notify, store), the process-wide Retry-After "not
// before" of each bank dependency, and the intake gate they imply (docs/design.md §3,
// "Dependency outages"): while the debit or the store circuit is not closed the container
// receives nothing, except one message when a probe is due and nobody holds the probe turn.
//
//   DependencyCircuits circuits(config, clock, random, waiter, &telemetry);
//   ListenerConfig{..., .intake = &circuits};
//   ChargeRecoveryService service(..., &circuits);
#pragma once

#include <array>
#include <functional>
#include <optional>
#include <string_view>

#include "application/hold_waiter.hpp"
#include "consumer/intake_gate.hpp"
#include "core/circuit_breaker.hpp"
#include "core/random.hpp"
#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic::application {

enum class Dependency { Debit, Notify, Store };
inline constexpr std::array<Dependency, 3> kDependencies = {Dependency::Debit, Dependency::Notify,
                                                            Dependency::Store};

// "debit", "notify", "store": the `dependency` label and log field.
[[nodiscard]] constexpr std::string_view to_string(Dependency dependency) {
  switch (dependency) {
    case Dependency::Debit:
      return "debit";
    case Dependency::Notify:
      return "notify";
    case Dependency::Store:
      return "store";
  }
  return "unknown";
}

// What the circuits report beyond the breakers' own transitions and probes.
class CircuitObserver : public CircuitListener {
 public:
  virtual void on_intake_paused(bool /*paused*/) {}
  virtual void on_retry_after(Dependency /*dependency*/, Millis /*retry_after*/) {}
};

// Thread-safety: every member may be called concurrently. Ownership: clock, random, waiter and
// observer are borrowed and must outlive it.
class DependencyCircuits final : public consumer::IntakeGate, private CircuitListener {
 public:
  // A probe receive that brought a message nobody probed with (it was not a charge, say) stops
  // blocking the next probe receive after this long.
  static constexpr Millis kProbeReceiveExpiry{5000};

  DependencyCircuits(CircuitConfig config, const Clock& clock, Random& random, HoldWaiter& waiter,
                     CircuitObserver* observer = nullptr);

  [[nodiscard]] CircuitBreaker& circuit(Dependency dependency);
  [[nodiscard]] const CircuitBreaker& circuit(Dependency dependency) const;
  [[nodiscard]] HoldWaiter& waiter() { return waiter_; }
  [[nodiscard]] const Clock& clock() const { return clock_; }

  // Called with each close of the debit circuit (the bank limiter's slow start).
  void on_debit_closed(std::function<void()> callback);

  // Retry-After from `dependency`: none of its calls before now + after (the later one wins).
  void defer(Dependency dependency, Millis after);
  // How long until `dependency` may be called again; nullopt when it may now.
  [[nodiscard]] std::optional<Millis> deferred(Dependency dependency) const;

  // When a message that found `dependency` open should come back: until its next probe, at
  // least the first probe delay, so that it is not received again before anything changed.
  [[nodiscard]] Millis park_delay(Dependency dependency) const;

  // A probe permit was handed out: the probe receive it came from is used.
  void probe_started();

  // consumer::IntakeGate
  [[nodiscard]] consumer::IntakeDecision before_receive() override;
  void after_receive(const consumer::IntakeDecision& decision, std::size_t received) override;

 private:
  void on_transition(std::string_view dependency, CircuitState from, CircuitState to,
                     Instant at) override;
  void on_probe(std::string_view dependency, bool success) override;
  void report_paused(bool paused);

  const Clock& clock_;
  HoldWaiter& waiter_;
  CircuitObserver* observer_;
  std::array<CircuitBreaker, 3> circuits_;

  mutable Mutex mutex_;
  std::array<Instant, 3> not_before_ GUARDED_BY(mutex_){};
  std::optional<Instant> probe_receive_until_ GUARDED_BY(mutex_);
  std::optional<bool> paused_ GUARDED_BY(mutex_);
  std::function<void()> on_debit_closed_ GUARDED_BY(mutex_);
};

}  // namespace ic::application
