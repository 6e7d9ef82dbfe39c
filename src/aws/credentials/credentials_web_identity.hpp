// Web-identity credentials (IRSA on EKS): the projected service-account token is exchanged for
// role credentials with an unsigned STS AssumeRoleWithWebIdentity (aws/sts.hpp).
//
//   AWS_WEB_IDENTITY_TOKEN_FILE  the token; re-read on every fetch, because the kubelet
//                                rotates it (a token read once would expire within a day)
//   AWS_ROLE_ARN                 the role to assume; both are required together
//   AWS_ROLE_SESSION_NAME        optional, [\w+=,.@-]{2,64}; default charge-recovery-<epoch ms>
//   STS endpoint                 AWS_ENDPOINT_URL_STS, else AWS_ENDPOINT_URL, else the regional
//                                https://sts.<region>.amazonaws.com (AWS_REGION /
//                                AWS_DEFAULT_REGION), else the global https://sts.amazonaws.com
//
// The cache (credentials_cache.hpp) keeps the answer and calls again before Expiration, which
// reads the token anew.
#pragma once

#include "aws/credentials/credentials.hpp"
#include "aws/protocol/endpoints.hpp"
#include "core/time.hpp"
#include "http/http_transport.hpp"

namespace ic::aws {

// Thread-safety: safe to call concurrently if the transport is. Ownership: borrows the
// transport and the clock, which must outlive the provider. Fetches on every call.
class WebIdentityCredentialsProvider final : public CredentialsProvider {
 public:
  WebIdentityCredentialsProvider(EnvLookup env, http::HttpTransport& transport, const Clock& clock)
      : env_(std::move(env)), transport_(transport), clock_(clock) {}
  [[nodiscard]] std::expected<Credentials, AwsError> credentials() override;

 private:
  EnvLookup env_;
  http::HttpTransport& transport_;
  const Clock& clock_;
};

}  // namespace ic::aws
