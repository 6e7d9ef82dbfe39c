// What the credentials cache reports (aws::CredentialsObserver): refreshes by result, a warning
// per failing spell (rate-limited, with the count held back) and one line at recovery, and the
// seconds until the cached credentials expire, read at scrape time.
#pragma once

#include <atomic>
#include <string>

#include "aws/credentials/credentials_cache.hpp"
#include "observability/json_log.hpp"
#include "observability/metrics.hpp"
#include "observability/repeat_limiter.hpp"

namespace ic::app {

inline constexpr std::string_view kCredentialsExpiryMetric = "ic_credentials_expiry_seconds";

// Thread-safety: on_refresh() on the cache's refresher thread, the collector on the scraper's.
// Ownership: borrows logger, registry and (after attach) the cache, which outlives any render.
class CredentialsTelemetry final : public aws::CredentialsObserver {
 public:
  CredentialsTelemetry(observability::Logger& log, observability::MetricsRegistry& metrics);

  // Registers the collector of ic_credentials_expiry_seconds. Call once, before the admin
  // server starts.
  void attach(const aws::CredentialsCache& cache);

  void on_refresh(const aws::AwsError* failure, bool stale) noexcept override;

  // The exposition text of the expiry gauge: absent while no credentials that expire are
  // cached; negative while expired ones are served (static stability).
  [[nodiscard]] std::string expiry_text() const;

 private:
  observability::Logger& log_;
  observability::MetricsRegistry& metrics_;
  observability::CounterFamily& refreshes_;
  observability::RepeatLimiter failure_warnings_{observability::kRepeatWindow};
  std::atomic<bool> failing_{false};
  const aws::CredentialsCache* cache_ = nullptr;
};

}  // namespace ic::app
