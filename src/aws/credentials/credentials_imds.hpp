// Credentials of the EC2 instance profile through IMDSv2:
//
//   PUT /latest/api/token                              x-aws-ec2-metadata-token-ttl-seconds
//   GET /latest/meta-data/iam/security-credentials/    -> role name   } both with
//   GET /latest/meta-data/iam/security-credentials/<role> -> document } x-aws-ec2-metadata-token
//
// Endpoint http://169.254.169.254 unless AWS_EC2_METADATA_SERVICE_ENDPOINT; off when
// AWS_EC2_METADATA_DISABLED=true. There is deliberately no IMDSv1 fallback: a host that refuses
// the token request has IMDSv1-only metadata, which instance hardening guides tell you to turn
// off, and an unauthenticated GET is what SSRF attacks ride on.
#pragma once

#include <string>

#include "aws/credentials/credentials.hpp"
#include "aws/protocol/endpoints.hpp"
#include "http/http_transport.hpp"

namespace ic::aws {

inline constexpr std::string_view kImdsEndpoint = "http://169.254.169.254";

// Thread-safety: safe to call concurrently if the transport is. Ownership: the transport is
// borrowed and must outlive the provider. Every call takes a fresh session token and fetches
// (credentials are fetched about once an hour, so a token cache would buy nothing); the chain
// caches the credentials.
class ImdsCredentialsProvider final : public CredentialsProvider {
 public:
  ImdsCredentialsProvider(EnvLookup env, http::HttpTransport& transport)
      : env_(std::move(env)), transport_(transport) {}
  [[nodiscard]] std::expected<Credentials, AwsError> credentials() override;

 private:
  [[nodiscard]] std::expected<std::string, AwsError> get(const std::string& base,
                                                         const std::string& path,
                                                         const std::string& token);

  EnvLookup env_;
  http::HttpTransport& transport_;
};

}  // namespace ic::aws
