// The default credential provider chain: environment, web identity (IRSA), shared files
// (AWS_PROFILE, credential_process), container (ECS / EKS Pod Identity), EC2 IMDSv2 -- the
// order of the Java SDK v2's DefaultCredentialsProvider (the PHP SDK's is the same). The first
// provider that answers is remembered and asked alone from then on; its credentials are cached and
// refreshed `refresh_margin` before `Expiration` (so a request signed just before never carries
// keys that expire in flight).
//
//   auto chain = make_default_credentials_chain(env, transport);   // in main
//   JsonClient dynamodb(config, transport, *chain, retry);
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "aws/credentials/credentials.hpp"
#include "aws/protocol/endpoints.hpp"
#include "core/thread_annotations.hpp"
#include "core/time.hpp"
#include "http/http_transport.hpp"

namespace ic::aws {

struct NamedProvider {
  std::string name;  // "environment", "web-identity", "profile", ... : used in error messages
  std::unique_ptr<CredentialsProvider> provider;
};

// Thread-safety: credentials() is safe to call concurrently; callers wait on one mutex while a
// refresh is in flight, so an expiry triggers one fetch, not one per thread. Ownership: owns
// the providers; borrows the clock, which must outlive the chain.
class CredentialsChain final : public CredentialsProvider {
 public:
  CredentialsChain(std::vector<NamedProvider> providers, const Clock& clock,
                   std::chrono::seconds refresh_margin = std::chrono::minutes{5});

  // Cached credentials while fresh. Otherwise a fetch: from the remembered provider, or from
  // each provider in order until one answers. If a refresh fails while the cached credentials
  // have not yet expired, those are returned (the next call tries again). The error when no
  // provider answers lists every provider's reason; it is Retryable when any of them failed
  // for a transient reason.
  [[nodiscard]] std::expected<Credentials, AwsError> credentials() override;

  // Name of the provider that answered, once one has.
  [[nodiscard]] std::optional<std::string> active_provider() const;

 private:
  [[nodiscard]] std::expected<Credentials, AwsError> fetch(Instant now) REQUIRES(mutex_);
  [[nodiscard]] std::expected<Credentials, AwsError> search() REQUIRES(mutex_);

  std::vector<NamedProvider> providers_;
  const Clock& clock_;
  std::chrono::seconds refresh_margin_;

  mutable Mutex mutex_;
  std::optional<std::size_t> active_ GUARDED_BY(mutex_);
  std::optional<Credentials> cached_ GUARDED_BY(mutex_);
  std::chrono::system_clock::time_point refresh_after_ GUARDED_BY(mutex_);
};

// The SDK-order chain over the real providers. `env` is the composition root's lookup.
[[nodiscard]] std::unique_ptr<CredentialsChain> make_default_credentials_chain(
    EnvLookup env, http::HttpTransport& transport, const Clock& clock = real_clock());

}  // namespace ic::aws
