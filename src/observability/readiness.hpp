// Readiness that tells the truth: one verdict over named dependencies, each learnt either from
// traffic (every receive, every store call) or from a prober on a slow timer. A dependency is
// down after `failures_to_down` consecutive failures, up again on its next success; the process
// is ready while every dependency is up (docs/design.md §5, "Admin endpoints and telemetry").
//
//   Readiness readiness(clock, {{.name = "queue", .max_silence = 45s},
//                               {.name = "receive", .failures_to_down = 2, .up_until_proven =
//                               true}});
//   readiness.succeeded("queue");              // the prober got an answer
//   readiness.failed("receive", error);        // once: still ready (grace); twice: not ready
//   bool ok = readiness.ready();
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic::observability {

struct DependencySpec {
  std::string name;
  // Consecutive failures before it counts as down: 1 for a probe, more for traffic, where one
  // failed call among many is noise.
  int failures_to_down = 1;
  // Traffic-fed dependencies are up until a failure says otherwise (an idle consumer has no
  // traffic to prove anything); probe-fed ones are down until their first success.
  bool up_until_proven = false;
  // When non-zero: down once no event arrived for this long. A probe that stopped answering
  // (a hung call, a dead prober thread) must not leave the last verdict standing.
  Millis max_silence{0};
  // Traffic stops when the queue is empty, so a dependency that went down on traffic may see
  // no success for hours after it recovered. When non-empty: a success of this (probe)
  // dependency brings it back, provided it has not failed for `quiet_period`.
  std::string recovered_by;
  Millis quiet_period{0};
};

struct DependencyStatus {
  std::string name;
  bool up = false;
  std::string code;    // why it is down: the last error's code, NotProbedYet or ProbeOverdue
  std::string detail;  // the last error's message, at most 200 characters
};

// Told about every change of any dependency's state (up, or down with a new code), with the
// whole picture.
// Thread-safety: called under Readiness's lock, in order, from whichever thread reported the
// event; must be quick and must not call back into Readiness.
class ReadinessListener {
 public:
  virtual ~ReadinessListener() = default;
  virtual void on_readiness(std::span<const DependencyStatus> dependencies, bool ready) = 0;
};

// Thread-safety: every member may be called concurrently from any thread. Ownership: the
// clock and the listener are borrowed and must outlive this object.
class Readiness {
 public:
  Readiness(const Clock& clock, std::vector<DependencySpec> specs,
            ReadinessListener* listener = nullptr);

  // Events; an unknown name is ignored.
  void succeeded(std::string_view dependency);
  void failed(std::string_view dependency, const Error& error);

  // Both apply max_silence first, so they are current even when no event arrives.
  [[nodiscard]] std::vector<DependencyStatus> statuses();
  [[nodiscard]] bool ready();

 private:
  struct State {
    DependencySpec spec;
    DependencyStatus status;
    int failures = 0;
    Instant last_event{};
    Instant last_failure{};
  };

  State* find(std::string_view name) REQUIRES(mutex_);
  // Applies max_silence, then tells the listener if any verdict differs from `before`.
  void settle(const std::vector<std::string>& before) REQUIRES(mutex_);
  // Per dependency: empty while up, else the code it is down with.
  [[nodiscard]] std::vector<std::string> verdicts() const REQUIRES(mutex_);

  const Clock& clock_;
  ReadinessListener* const listener_;
  Mutex mutex_;
  std::vector<State> states_ GUARDED_BY(mutex_);
};

}  // namespace ic::observability
