// Environment credentials: both halves of the key pair, or nothing.
#include "aws/credentials/credentials_env.hpp"

#include "aws/credentials/credentials_common.hpp"

namespace ic::aws {

std::expected<Credentials, AwsError> EnvironmentCredentialsProvider::credentials() {
  auto value = [this](std::string_view name) { return env_(name).value_or(std::string{}); };
  Credentials out{.access_key_id = value("AWS_ACCESS_KEY_ID"),
                  .secret_access_key = value("AWS_SECRET_ACCESS_KEY"),
                  .session_token = value("AWS_SESSION_TOKEN")};
  if (out.access_key_id.empty() && out.secret_access_key.empty()) {
    return std::unexpected(
        credentials_not_found("environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY unset"));
  }
  if (out.access_key_id.empty() || out.secret_access_key.empty()) {
    return std::unexpected(credentials_invalid(
        "environment: AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY must be set together"));
  }
  return out;
}

}  // namespace ic::aws
