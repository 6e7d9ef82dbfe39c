#include "app/telemetry/credentials_telemetry.hpp"

#include <fmt/format.h>

namespace ic::app {

CredentialsTelemetry::CredentialsTelemetry(observability::Logger& log,
                                           observability::MetricsRegistry& metrics)
    : log_(log),
      metrics_(metrics),
      refreshes_(metrics.counter("ic_credentials_refreshes_total",
                                 "Background refreshes of the AWS credentials, by result",
                                 {"result"})) {}

void CredentialsTelemetry::attach(const aws::CredentialsCache& cache) {
  cache_ = &cache;
  metrics_.add_collector([this] { return expiry_text(); });
}

std::string CredentialsTelemetry::expiry_text() const {
  if (cache_ == nullptr) return {};
  const auto status = cache_->status();
  if (!status.expiration) return {};
  const double left =
      std::chrono::duration<double>(*status.expiration - cache_->clock().now()).count();
  return fmt::format(
      "# HELP {0} Seconds until the cached AWS credentials expire (negative: expired ones are "
      "served)\n# TYPE {0} gauge\n{0} {1:.3f}\n",
      kCredentialsExpiryMetric, left);
}

void CredentialsTelemetry::on_refresh(const aws::AwsError* failure, bool stale) noexcept {
  try {
    refreshes_.with({failure == nullptr ? "success" : "failure"}).inc();
    if (failure == nullptr) {
      if (failing_.exchange(false)) log_.info("AWS credentials refreshed again", {});
      return;
    }
    failing_ = true;
    if (const auto held = failure_warnings_.admit(failure->code)) {
      log_.warn("AWS credentials refresh failed", {{"code", failure->code},
                                                   {"detail", failure->message},
                                                   {"retryable", failure->retryable()},
                                                   {"servingExpired", stale},
                                                   {"suppressed", *held}});
    }
  } catch (...) {  // a log or metric allocation failing must not reach the refresher
  }
}

}  // namespace ic::app
