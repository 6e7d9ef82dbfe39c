// Credentials from AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and (optional) AWS_SESSION_TOKEN.
//
//   EnvironmentCredentialsProvider provider(env);  // env: lookup injected by main
#pragma once

#include "aws/credentials/credentials.hpp"
#include "aws/protocol/endpoints.hpp"

namespace ic::aws {

// Thread-safety: credentials() is as thread-safe as the injected lookup. Reads the lookup on
// every call; it never fetches anything.
class EnvironmentCredentialsProvider final : public CredentialsProvider {
 public:
  explicit EnvironmentCredentialsProvider(EnvLookup env) : env_(std::move(env)) {}
  [[nodiscard]] std::expected<Credentials, AwsError> credentials() override;

 private:
  EnvLookup env_;
};

}  // namespace ic::aws
