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

struct Partition {
  std::string_view id;
  std::string_view dns_suffix;
  std::string_view dualstack_suffix;
};

// botocore's partitions.json (dnsSuffix, dualStackDnsSuffix); its order does not matter here,
// the prefixes are disjoint.
Partition partition_of(std::string_view region) {
  if (region.starts_with("cn-"))
    return {"aws-cn", "amazonaws.com.cn", "api.amazonwebservices.com.cn"};
  if (region.starts_with("us-gov-")) return {"aws-us-gov", "amazonaws.com", "api.aws"};
  if (region.starts_with("us-isob-")) return {"aws-iso-b", "sc2s.sgov.gov", "api.aws.scloud"};
  if (region.starts_with("us-iso-")) return {"aws-iso", "c2s.ic.gov", "api.aws.ic.gov"};
  return {"aws", "amazonaws.com", "api.aws"};
}

// The three rule sets serve FIPS without dual-stack on the plain host in GovCloud, where
// every endpoint is FIPS-validated already.
bool fips_on_plain_host(std::string_view partition) {
  return partition == "aws-us-gov";
}

bool flag_set(const EnvLookup& env, std::string_view name) {
  auto value = non_empty(env, name);
  if (!value) return false;
  std::string lower;
  for (char c : *value) lower += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return lower == "true";
}

}  // namespace

std::string default_endpoint(std::string_view service_id, std::string_view region,
                             EndpointFlags flags) {
  const Partition partition = partition_of(region);
  const bool fips_host = flags.fips && (flags.dualstack || !fips_on_plain_host(partition.id));
  return fmt::format("https://{}{}.{}.{}", service_id, fips_host ? "-fips" : "", region,
                     flags.dualstack ? partition.dualstack_suffix : partition.dns_suffix);
}

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
  return default_endpoint(service_id, region,
                          {.fips = flag_set(env, "AWS_USE_FIPS_ENDPOINT"),
                           .dualstack = flag_set(env, "AWS_USE_DUALSTACK_ENDPOINT")});
}

}  // namespace ic::aws
