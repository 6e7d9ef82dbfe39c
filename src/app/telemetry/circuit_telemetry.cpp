#include "app/telemetry/circuit_telemetry.hpp"

#include <fmt/format.h>

namespace ic::app {
namespace {

using application::Dependency;
using application::kDependencies;

double gauge_value(CircuitState state) {
  switch (state) {
    case CircuitState::Closed:
      return 0;
    case CircuitState::Open:
      return 1;
    case CircuitState::HalfOpen:
      return 2;
  }
  return 0;
}

std::string_view transition_message(CircuitState to) {
  switch (to) {
    case CircuitState::Open:
      return "circuit opened";
    case CircuitState::HalfOpen:
      return "circuit half-open";
    case CircuitState::Closed:
      return "circuit closed";
  }
  return "circuit changed";
}

std::size_t index_of(std::string_view dependency) {
  for (std::size_t i = 0; i < kDependencies.size(); ++i) {
    if (to_string(kDependencies[i]) == dependency) return i;
  }
  return 0;
}

double seconds(Millis ms) {
  return std::chrono::duration<double>(ms).count();
}

}  // namespace

CircuitTelemetry::CircuitTelemetry(observability::Logger& log, observability::MetricsRegistry& m)
    : log_(log),
      metrics_(m),
      state_(m.gauge("ic_circuit_state", "Circuit state: 0 closed, 1 open, 2 half_open",
                     {"dependency"})),
      transitions_(m.counter("ic_circuit_transitions_total", "Circuit transitions by target state",
                             {"dependency", "to"})),
      probes_(m.counter("ic_circuit_probes_total", "Probe calls of open circuits by result",
                        {"dependency", "result"})),
      intake_paused_(m.gauge("ic_intake_paused", "1 while the consumer receives nothing")),
      bank_limit_(m.gauge("ic_bank_concurrency_limit", "Adaptive limit of concurrent debits")),
      bank_in_flight_(m.gauge("ic_bank_in_flight", "Debit calls in flight")),
      retry_after_(m.counter("ic_bank_retry_after_total",
                             "Replies carrying a Retry-After that was honoured", {"dependency"})) {
  // Every series exists from the start, so dashboards see 0 rather than nothing.
  for (const Dependency d : kDependencies) {
    state_.with({to_string(d)}).set(0);
    for (const CircuitState to :
         {CircuitState::Open, CircuitState::HalfOpen, CircuitState::Closed}) {
      (void)transitions_.with({to_string(d), to_string(to)});
    }
    (void)probes_.with({to_string(d), "success"});
    (void)probes_.with({to_string(d), "failure"});
  }
  (void)retry_after_.with({"debit"});
  (void)retry_after_.with({"notify"});
  intake_paused_.with({}).set(0);
}

void CircuitTelemetry::attach(const application::DependencyCircuits& circuits) {
  circuits_ = &circuits;
  metrics_.add_collector([this] { return open_seconds_text(); });
}

std::string CircuitTelemetry::open_seconds_text() const {
  if (circuits_ == nullptr) return {};
  const Instant now = circuits_->clock().now();
  std::string current =
      "# HELP ic_circuit_open_seconds Length of the current open spell, 0 when closed\n"
      "# TYPE ic_circuit_open_seconds gauge\n";
  std::string total =
      "# HELP ic_circuit_open_seconds_total Seconds spent open (open or half-open)\n"
      "# TYPE ic_circuit_open_seconds_total counter\n";
  for (std::size_t i = 0; i < kDependencies.size(); ++i) {
    const std::string_view name = to_string(kDependencies[i]);
    const CircuitSnapshot s = circuits_->circuit(kDependencies[i]).snapshot();
    const Millis spell = s.state == CircuitState::Closed ? Millis{0} : now - s.opened_at;
    const Millis spent = Millis{closed_spells_ms_[i].load()} + std::max(spell, Millis{0});
    current += fmt::format("ic_circuit_open_seconds{{dependency=\"{}\"}} {:.3f}\n", name,
                           seconds(std::max(spell, Millis{0})));
    total += fmt::format("ic_circuit_open_seconds_total{{dependency=\"{}\"}} {:.3f}\n", name,
                         seconds(spent));
  }
  return current + total;
}

void CircuitTelemetry::on_transition(std::string_view dependency, CircuitState from,
                                     CircuitState to, Instant at) {
  // Transitions are published outside the breaker's lock, so two could arrive out of order:
  // the gauge takes the circuit's state as it is now.
  const CircuitState now_state =
      circuits_ != nullptr ? circuits_->circuit(kDependencies[index_of(dependency)]).state() : to;
  state_.with({dependency}).set(gauge_value(now_state));
  transitions_.with({dependency, to_string(to)}).inc();
  std::int64_t open_ms = 0;
  if (circuits_ != nullptr && to == CircuitState::Closed) {
    const CircuitSnapshot s = circuits_->circuit(kDependencies[index_of(dependency)]).snapshot();
    open_ms = std::max<std::int64_t>(0, (at - s.opened_at).count());
    closed_spells_ms_[index_of(dependency)] += open_ms;
  }
  const observability::LogLevel level = to == CircuitState::Open && from == CircuitState::Closed
                                            ? observability::LogLevel::Warn
                                            : observability::LogLevel::Info;
  log_.log(level, transition_message(to),
           {{"dependency", dependency},
            {"from", to_string(from)},
            {"to", to_string(to)},
            {"openMs", open_ms}});
}

void CircuitTelemetry::on_probe(std::string_view dependency, bool success) {
  probes_.with({dependency, success ? "success" : "failure"}).inc();
}

void CircuitTelemetry::on_intake_paused(bool paused) {
  intake_paused_.with({}).set(paused ? 1 : 0);
  log_.info(paused ? "intake paused" : "intake resumed", {});
}

void CircuitTelemetry::on_retry_after(application::Dependency dependency, Millis retry_after) {
  retry_after_.with({to_string(dependency)}).inc();
  log_.info("honouring Retry-After",
            {{"dependency", to_string(dependency)}, {"retryAfterMs", retry_after.count()}});
}

void CircuitTelemetry::on_bank_limit(int limit, int in_flight) {
  bank_limit_.with({}).set(limit);
  bank_in_flight_.with({}).set(in_flight);
}

}  // namespace ic::app
