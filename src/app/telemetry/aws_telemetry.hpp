// What the AWS JSON clients report (aws::JsonClientObserver): every HTTP attempt, and the
// retries, as metrics and log lines.
#pragma once

#include "aws/json_client.hpp"
#include "observability/json_log.hpp"
#include "observability/metrics.hpp"

namespace ic::app {

// Thread-safety: called concurrently from every thread that calls AWS. Ownership: borrows
// logger and registry.
class AwsTelemetry final : public aws::JsonClientObserver {
 public:
  AwsTelemetry(observability::Logger& log, observability::MetricsRegistry& metrics);

  void on_attempt(const aws::AttemptEvent& event) override;

 private:
  observability::Logger& log_;
  observability::CounterFamily& aws_requests_;
  observability::CounterFamily& aws_retries_;
};

}  // namespace ic::app
