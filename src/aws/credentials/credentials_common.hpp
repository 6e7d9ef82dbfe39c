// Shared by the credential providers: their error values and the environment read. Error
// messages name the source and the reason, never a key, a token or a response body (bodies
// may carry the very secret that failed).
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "aws/protocol/aws_error.hpp"
#include "aws/protocol/endpoints.hpp"

namespace ic::aws {

// The SDKs treat a variable set to "" as unset.
[[nodiscard]] inline std::optional<std::string> env_value(const EnvLookup& env,
                                                          std::string_view name) {
  auto value = env(name);
  if (!value || value->empty()) return std::nullopt;
  return value;
}

// The provider is not configured here (variables unset, no profile, no endpoint): the chain
// moves on to the next provider.
inline constexpr std::string_view kCredentialsNotFound = "CredentialsNotFound";

[[nodiscard]] inline AwsError credentials_not_found(std::string message) {
  return {{.error_class = ErrorClass::Permanent,
           .code = std::string(kCredentialsNotFound),
           .message = std::move(message)}};
}

// The provider is configured but what it holds or serves is unusable.
[[nodiscard]] inline AwsError credentials_invalid(std::string message) {
  return {{.error_class = ErrorClass::Permanent,
           .code = "InvalidCredentials",
           .message = std::move(message)}};
}

}  // namespace ic::aws
