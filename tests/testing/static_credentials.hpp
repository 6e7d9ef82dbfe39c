// A CredentialsProvider that always answers the same keys: signing without a credential chain.
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <utility>

#include "aws/credentials/credentials.hpp"

namespace ic::testing {

class StaticCredentials final : public aws::CredentialsProvider {
 public:
  StaticCredentials(std::string key_id, std::string secret)
      : credentials_{.access_key_id = std::move(key_id),
                     .secret_access_key = std::move(secret),
                     .session_token = {},
                     .expiration = std::nullopt} {}
  std::expected<aws::Credentials, aws::AwsError> credentials() override { return credentials_; }

 private:
  aws::Credentials credentials_;
};

}  // namespace ic::testing
