#include "aws/protocol/endpoints.hpp"

#include <fmt/format.h>

#include <cctype>

namespace ic::aws {
namespace {

std::optional<std::string> non_empty(const EnvLookup& env, std::string_view name) {
  auto value = env(name);
  if (!value || value->empty()) return std::nullopt;
  return value;
}

std::string without_trailing_slashes(std::string url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
  return url;
}

}  // namespace

std::optional<std::string> resolve_region(const EnvLookup& env) {
  if (auto region = non_empty(env, "AWS_REGION")) return region;
  return non_empty(env, "AWS_DEFAULT_REGION");
}

std::string resolve_endpoint(std::string_view service_id, std::string_view region,
                             const EnvLookup& env) {
  std::string variable = "AWS_ENDPOINT_URL_";
  for (char c : service_id) {
    variable += (c == ' ' || c == '-')
                    ? '_'
                    : static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  }
  if (auto url = non_empty(env, variable)) return without_trailing_slashes(std::move(*url));
  if (auto url = non_empty(env, "AWS_ENDPOINT_URL"))
    return without_trailing_slashes(std::move(*url));
  return fmt::format("https://{}.{}.amazonaws.com", service_id, region);
}

}  // namespace ic::aws
