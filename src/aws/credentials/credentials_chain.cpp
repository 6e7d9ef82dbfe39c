// Provider chain with a sticky provider and refresh-before-expiry caching.
#include "aws/credentials/credentials_chain.hpp"

#include <fmt/format.h>

#include "aws/credentials/credentials_common.hpp"
#include "aws/credentials/credentials_container.hpp"
#include "aws/credentials/credentials_env.hpp"
#include "aws/credentials/credentials_imds.hpp"
#include "aws/credentials/credentials_profile.hpp"
#include "aws/credentials/credentials_web_identity.hpp"

namespace ic::aws {

CredentialsChain::CredentialsChain(std::vector<NamedProvider> providers, const Clock& clock,
                                   std::chrono::seconds refresh_margin)
    : providers_(std::move(providers)), clock_(clock), refresh_margin_(refresh_margin) {}

std::expected<Credentials, AwsError> CredentialsChain::credentials() {
  MutexLock lock(mutex_);
  const Instant now = clock_.now();
  if (cached_ && now < refresh_after_) return *cached_;

  auto fetched = fetch(now);
  if (fetched) {
    // Refresh `margin` early, but never later than halfway to expiry, so that short-lived
    // credentials (less than 2 x margin left) are not re-fetched on every call.
    refresh_after_ = std::chrono::system_clock::time_point::max();
    if (fetched->expiration) {
      const auto left = *fetched->expiration - now;
      refresh_after_ = *fetched->expiration -
                       std::min<std::chrono::system_clock::duration>(refresh_margin_, left / 2);
    }
    cached_ = *fetched;
    return fetched;
  }
  if (cached_ && (!cached_->expiration || now < *cached_->expiration)) return *cached_;
  return fetched;
}

std::expected<Credentials, AwsError> CredentialsChain::fetch(Instant now) {
  auto result = active_ ? providers_[*active_].provider->credentials() : search();
  if (result && result->expiration && *result->expiration <= now) {
    return std::unexpected(
        AwsError{{.error_class = ErrorClass::Retryable,
                  .code = "InvalidCredentials",
                  .message = fmt::format("{}: served credentials that have already expired",
                                         providers_[active_.value_or(0)].name)}});
  }
  return result;
}

std::expected<Credentials, AwsError> CredentialsChain::search() {
  AwsError error{{.error_class = ErrorClass::Permanent,
                  .code = std::string(kCredentialsNotFound),
                  .message = "no credentials provider answered:"}};
  // A configured provider that failed (an untrusted STS certificate, a broken profile) is the
  // reason an operator needs; it leads, so a shortened detail (readiness, logs) still holds it.
  std::string not_configured;
  for (std::size_t i = 0; i < providers_.size(); ++i) {
    auto result = providers_[i].provider->credentials();
    if (result) {
      active_ = i;
      return result;
    }
    if (result.error().error_class != ErrorClass::Permanent) {
      error.error_class = ErrorClass::Retryable;
    }
    const auto reason = fmt::format(" [{}] {};", providers_[i].name, result.error().message);
    (result.error().code == kCredentialsNotFound ? not_configured : error.message) += reason;
  }
  error.message += not_configured;
  return std::unexpected(std::move(error));
}

std::optional<std::string> CredentialsChain::active_provider() const {
  MutexLock lock(mutex_);
  if (!active_) return std::nullopt;
  return providers_[*active_].name;
}

std::unique_ptr<CredentialsChain> make_default_credentials_chain(EnvLookup env,
                                                                 http::HttpTransport& transport,
                                                                 const Clock& clock) {
  std::vector<NamedProvider> providers;
  providers.push_back({"environment", std::make_unique<EnvironmentCredentialsProvider>(env)});
  providers.push_back(
      {"web-identity", std::make_unique<WebIdentityCredentialsProvider>(env, transport, clock)});
  providers.push_back({"profile", std::make_unique<ProfileCredentialsProvider>(env)});
  providers.push_back(
      {"container", std::make_unique<ContainerCredentialsProvider>(env, transport)});
  providers.push_back({"imds", std::make_unique<ImdsCredentialsProvider>(env, transport)});
  return std::make_unique<CredentialsChain>(std::move(providers), clock);
}

}  // namespace ic::aws
