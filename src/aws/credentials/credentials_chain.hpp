// The default credential provider chain: environment, web identity (IRSA), shared files
// (AWS_PROFILE, credential_process), container (ECS / EKS Pod Identity), EC2 IMDSv2 -- the
// order of the Java SDK v2's DefaultCredentialsProvider (the PHP SDK's is the same). The first
// provider that answers is remembered and asked alone from then on. The chain fetches on every
// call and may block for a provider's timeout (a process, an STS call, a metadata endpoint):
// CredentialsCache (credentials_cache.hpp) calls it on a thread of its own and is what signers
// use.
//
//   auto cache = std::make_unique<CredentialsCache>(
//       make_default_credentials_chain(env, blocking_transport), real_clock(), real_random());
#pragma once

#include <memory>
#include <optional>
#include <stop_token>
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
  // Its credentials may still be used after their Expiration while it cannot be reached (the
  // SDKs' static stability for IMDS and container credentials; docs/design.md, Credentials).
  bool static_stability = false;
};

// Thread-safety: credentials() is safe to call concurrently (each call fetches; the mutex is
// held only to read or record which provider answered, never across a fetch). Ownership: owns
// the providers; borrows the clock, which must outlive the chain.
class CredentialsChain final : public CredentialsProvider {
 public:
  CredentialsChain(std::vector<NamedProvider> providers, const Clock& clock);

  // A fetch: from the remembered provider, or from each provider in order until one answers.
  // Credentials that have already expired are an error. The error when no provider answers
  // lists every provider's reason; it is Retryable when any of them failed for a transient
  // reason.
  [[nodiscard]] std::expected<Credentials, AwsError> credentials() override;

  // Name of the provider that answered, once one has.
  [[nodiscard]] std::optional<std::string> active_provider() const;
  // Whether the provider that answered allows its credentials to be used past expiry.
  [[nodiscard]] bool active_static_stability() const;

 private:
  [[nodiscard]] std::expected<Credentials, AwsError> search();

  std::vector<NamedProvider> providers_;
  const Clock& clock_;

  mutable Mutex mutex_;
  std::optional<std::size_t> active_ GUARDED_BY(mutex_);
};

// The SDK-order chain over the real providers. `env` is the composition root's lookup; once
// `stop` is requested a running credential_process is killed (HTTP fetches are stopped by the
// transport).
[[nodiscard]] std::unique_ptr<CredentialsChain> make_default_credentials_chain(
    EnvLookup env, http::HttpTransport& transport, const Clock& clock = real_clock(),
    std::stop_token stop = {});

}  // namespace ic::aws
