// Asks each dependency "are you there?" on a slow timer and tells Readiness the answer, so
// readiness drops while a dependency is down even when no traffic would notice (an empty
// queue), and comes back when it recovers.
//
//   Prober prober(readiness, {{"queue", [&] { return probe_queue(); }}},
//                 {.interval = 15s}, &thread_observer);
//   prober.start();   // probes at once, then every interval, until stop() or destruction
#pragma once

#include <expected>
#include <functional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "core/error.hpp"
#include "core/thread_guard.hpp"
#include "core/time.hpp"
#include "observability/readiness.hpp"

namespace ic::observability {

struct Probe {
  std::string dependency;  // the Readiness dependency it reports to
  // Blocks for one round trip at most (the caller bounds it with a short timeout and no
  // retries: a probe's job is to notice, not to get through).
  std::function<std::expected<void, Error>()> run;
};

struct ProberConfig {
  Millis interval{15000};
  // After a round with a failure, the next one comes sooner, so recovery is noticed quickly.
  Millis retry_interval{5000};
};

// Thread-safety: probe_once() is for tests and the owner's thread; start()/stop() from the
// owner's thread. Ownership: borrows readiness and observer, which must outlive the prober.
class Prober {
 public:
  Prober(Readiness& readiness, std::vector<Probe> probes, ProberConfig config,
         ThreadFailureObserver* observer = nullptr);
  ~Prober() { stop(); }
  Prober(const Prober&) = delete;
  Prober& operator=(const Prober&) = delete;

  // Runs every probe once, in order; true when all of them succeeded. A probe that throws
  // counts as failed (code ProbeException) and is reported to the observer.
  bool probe_once();
  void start();
  // Interrupts the wait between rounds (not a probe in progress) and joins. Idempotent.
  void stop();

 private:
  void run(std::stop_token stop);

  Readiness& readiness_;
  std::vector<Probe> probes_;
  const ProberConfig config_;
  ThreadFailureObserver* const observer_;
  std::jthread thread_;
};

}  // namespace ic::observability
