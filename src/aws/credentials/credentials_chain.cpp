// Provider chain with a sticky provider.
#include "aws/credentials/credentials_chain.hpp"

#include <fmt/format.h>

#include "aws/credentials/credentials_common.hpp"
#include "aws/credentials/credentials_container.hpp"
#include "aws/credentials/credentials_env.hpp"
#include "aws/credentials/credentials_imds.hpp"
#include "aws/credentials/credentials_profile.hpp"
#include "aws/credentials/credentials_web_identity.hpp"

namespace ic::aws {

CredentialsChain::CredentialsChain(std::vector<NamedProvider> providers, const Clock& clock)
    : providers_(std::move(providers)), clock_(clock) {}

std::expected<Credentials, AwsError> CredentialsChain::credentials() {
  std::optional<std::size_t> active;
  {
    MutexLock lock(mutex_);
    active = active_;
  }
  auto result = active ? providers_[*active].provider->credentials() : search();
  if (result && result->expiration && *result->expiration <= clock_.now()) {
    MutexLock lock(mutex_);
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
      MutexLock lock(mutex_);
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

bool CredentialsChain::active_static_stability() const {
  MutexLock lock(mutex_);
  return active_ && providers_[*active_].static_stability;
}

std::unique_ptr<CredentialsChain> make_default_credentials_chain(EnvLookup env,
                                                                 http::HttpTransport& transport,
                                                                 const Clock& clock,
                                                                 std::stop_token stop) {
  std::vector<NamedProvider> providers;
  providers.push_back({"environment", std::make_unique<EnvironmentCredentialsProvider>(env)});
  providers.push_back(
      {"web-identity", std::make_unique<WebIdentityCredentialsProvider>(env, transport, clock)});
  providers.push_back({"profile", std::make_unique<ProfileCredentialsProvider>(
                                      env, ProcessLimits{.cancel = std::move(stop)})});
  providers.push_back({"container", std::make_unique<ContainerCredentialsProvider>(env, transport),
                       /*static_stability=*/true});
  providers.push_back({"imds", std::make_unique<ImdsCredentialsProvider>(env, transport),
                       /*static_stability=*/true});
  return std::make_unique<CredentialsChain>(std::move(providers), clock);
}

}  // namespace ic::aws
