#include "app/telemetry/aws_telemetry.hpp"

namespace ic::app {

AwsTelemetry::AwsTelemetry(observability::Logger& log, observability::MetricsRegistry& m)
    : log_(log),
      aws_requests_(m.counter("ic_aws_requests_total", "AWS HTTP attempts",
                              {"service", "operation", "result"})),
      aws_retries_(m.counter("ic_aws_retries_total", "AWS attempts that are retried",
                             {"service", "operation"})) {}

void AwsTelemetry::on_attempt(const aws::AttemptEvent& event) {
  aws_requests_.with({event.service, event.operation, event.result}).inc();
  if (event.will_retry) {
    aws_retries_.with({event.service, event.operation}).inc();
    log_.warn("AWS call will be retried", {{"service", event.service},
                                           {"operation", event.operation},
                                           {"attempt", event.attempt},
                                           {"result", event.result},
                                           {"httpStatus", event.http_status}});
  }
}

}  // namespace ic::app
