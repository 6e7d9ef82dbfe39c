// AWS credentials and the provider port. Secrets never leave this type in a log.
#pragma once

#include <chrono>
#include <expected>
#include <optional>
#include <string>

#include "aws/protocol/aws_error.hpp"

namespace ic::aws {

struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;  // empty for long-term keys
  std::optional<std::chrono::system_clock::time_point> expiration;
};

// Thread-safety: credentials() is safe to call concurrently. The providers that fetch (over
// the network, from files, from a process) block for it and cache nothing; signers on an event
// loop ask CredentialsCache (credentials_cache.hpp), which never blocks.
class CredentialsProvider {
 public:
  virtual ~CredentialsProvider() = default;
  [[nodiscard]] virtual std::expected<Credentials, AwsError> credentials() = 0;
};

}  // namespace ic::aws
