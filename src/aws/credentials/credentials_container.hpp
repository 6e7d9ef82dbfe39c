// Credentials from the ECS task / EKS Pod Identity agent endpoint.
//
//   AWS_CONTAINER_CREDENTIALS_RELATIVE_URI  path on the ECS agent, http://169.254.170.2
//   AWS_CONTAINER_CREDENTIALS_FULL_URI      any https URL, or http only to a loopback host
//                                           or the ECS (169.254.170.2) / EKS (169.254.170.23,
//                                           fd00:ec2::23) agents, as the SDKs allow
//   AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE  sent as Authorization; re-read on every fetch
//                                           because EKS rotates it; wins over ...
//   AWS_CONTAINER_AUTHORIZATION_TOKEN       ... the literal token
//
// RELATIVE_URI wins over FULL_URI. The agent host for RELATIVE_URI is a constructor argument
// so tests can point it at a local server.
#pragma once

#include <string>

#include "aws/credentials/credentials.hpp"
#include "aws/protocol/endpoints.hpp"
#include "http/http_transport.hpp"
#include "http/url.hpp"

namespace ic::aws {

inline constexpr std::string_view kEcsAgentUrl = "http://169.254.170.2";

// True when the SDKs would send container credentials to this URL.
[[nodiscard]] bool container_full_uri_allowed(const http::UrlParts& url);

// Thread-safety: safe to call concurrently if the transport is (http::HttpTransport's contract).
// Ownership: the transport is borrowed and must outlive the provider. Fetches on every call;
// the cache (credentials_cache.hpp) caches, on its own thread.
class ContainerCredentialsProvider final : public CredentialsProvider {
 public:
  ContainerCredentialsProvider(EnvLookup env, http::HttpTransport& transport,
                               std::string agent_url = std::string(kEcsAgentUrl))
      : env_(std::move(env)), transport_(transport), agent_url_(std::move(agent_url)) {}
  [[nodiscard]] std::expected<Credentials, AwsError> credentials() override;

 private:
  [[nodiscard]] std::expected<http::HttpRequest, AwsError> build_request() const;

  EnvLookup env_;
  http::HttpTransport& transport_;
  std::string agent_url_;
};

}  // namespace ic::aws
