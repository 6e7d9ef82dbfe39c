// Where a service lives: the SDKs' endpoint and region settings, resolved from an injected
// environment lookup so that only the composition root touches the process environment.
//
//   auto region = resolve_region(env);                  // AWS_REGION, AWS_DEFAULT_REGION
//   auto url = resolve_endpoint("dynamodb", *region, env);
//   // AWS_ENDPOINT_URL_DYNAMODB, else AWS_ENDPOINT_URL, else
//   https://dynamodb.<region>.amazonaws.com
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace ic::aws {

// Returns the value of an environment variable, or nullopt when unset.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

// AWS_REGION, then AWS_DEFAULT_REGION; empty values count as unset.
[[nodiscard]] std::optional<std::string> resolve_region(const EnvLookup& env);

// `service_id` is the SDK service id ("dynamodb", "sqs"); its override variable is
// AWS_ENDPOINT_URL_<SERVICE_ID upper-cased, spaces and dashes as '_'>. Trailing slashes are
// removed so the caller can append a path.
[[nodiscard]] std::string resolve_endpoint(std::string_view service_id, std::string_view region,
                                           const EnvLookup& env);

}  // namespace ic::aws
