// Turns what the service, the listener container, the AWS clients and readiness report into
// JSON log lines and Prometheus metrics: one class per concern, sharing the logger and the
// registry. The one place that knows metric names.
//
//   Telemetry telemetry(log, metrics);
//   ChargeRecoveryService service(..., telemetry.charges, ...);
//   ListenerContainer container(queue, handler, config, &telemetry.listener);
#pragma once

#include <string_view>

#include "app/telemetry/aws_telemetry.hpp"
#include "app/telemetry/charge_telemetry.hpp"
#include "app/telemetry/circuit_telemetry.hpp"
#include "app/telemetry/credentials_telemetry.hpp"
#include "app/telemetry/health_telemetry.hpp"
#include "app/telemetry/listener_telemetry.hpp"
#include "app/telemetry/loop_telemetry.hpp"

namespace ic::app {

// Names the message the current task handles (core/task_locals.hpp), so every log line of its
// handling carries the messageId without threading it through the domain.
class MessageScope {
 public:
  explicit MessageScope(std::string_view message_id);
  ~MessageScope();
  MessageScope(const MessageScope&) = delete;
  MessageScope& operator=(const MessageScope&) = delete;
  [[nodiscard]] static std::string_view current();
};

// Also registers ic_build_info, the process_* collector and the logger's dropped lines
// (ic_log_lines_dropped_total, counted until this is destroyed). Ownership: borrows logger and
// registry; never moves (readiness and the clients keep pointers to its members).
struct Telemetry {
  Telemetry(observability::Logger& log, observability::MetricsRegistry& metrics);
  ~Telemetry();
  Telemetry(const Telemetry&) = delete;
  Telemetry& operator=(const Telemetry&) = delete;

  // From now on receives feed the "receive" dependency and store calls the "store" one.
  // Call before any thread reports.
  void feed(observability::Readiness& readiness) {
    charges.feed(readiness);
    listener.feed(readiness);
  }

  ChargeTelemetry charges;
  ListenerTelemetry listener;
  AwsTelemetry aws;
  HealthTelemetry health;
  CircuitTelemetry circuits;
  LoopTelemetry loop;
  CredentialsTelemetry credentials;

 private:
  observability::Logger& log_;
};

}  // namespace ic::app
