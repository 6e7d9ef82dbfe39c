// What the dependency circuits and the bank pacer report (docs/design.md §3, "Dependency
// outages"): one log line per transition, never one per failure, and the ic_circuit_*,
// ic_intake_paused, ic_bank_* metrics.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>

#include "application/bank_pacer.hpp"
#include "application/dependency_circuits.hpp"
#include "observability/json_log.hpp"
#include "observability/metrics.hpp"

namespace ic::app {

// Thread-safety: every hook is called concurrently from workers. Ownership: borrows the
// logger, the registry and (after attach) the circuits, which must outlive any render.
class CircuitTelemetry final : public application::CircuitObserver,
                               public application::PacerObserver {
 public:
  CircuitTelemetry(observability::Logger& log, observability::MetricsRegistry& metrics);

  // Registers the collector of ic_circuit_open_seconds and ic_circuit_open_seconds_total,
  // read from the circuits at scrape time. Call once, before the admin server starts.
  void attach(const application::DependencyCircuits& circuits);

  void on_transition(std::string_view dependency, CircuitState from, CircuitState to,
                     Instant at) override;
  void on_probe(std::string_view dependency, bool success) override;
  void on_intake_paused(bool paused) override;
  void on_retry_after(application::Dependency dependency, Millis retry_after) override;
  void on_bank_limit(int limit, int in_flight) override;

  // The exposition text of the two open-seconds metrics (for the collector and tests).
  [[nodiscard]] std::string open_seconds_text() const;

 private:
  observability::Logger& log_;
  observability::MetricsRegistry& metrics_;
  observability::GaugeFamily& state_;
  observability::CounterFamily& transitions_;
  observability::CounterFamily& probes_;
  observability::GaugeFamily& intake_paused_;
  observability::GaugeFamily& bank_limit_;
  observability::GaugeFamily& bank_in_flight_;
  observability::CounterFamily& retry_after_;
  const application::DependencyCircuits* circuits_ = nullptr;
  // Milliseconds of every finished open spell, per dependency (index of kDependencies).
  std::array<std::atomic<std::int64_t>, 3> closed_spells_ms_{};
};

}  // namespace ic::app
