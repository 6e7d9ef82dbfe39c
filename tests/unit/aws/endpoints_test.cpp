// Endpoint and region resolution follows the SDKs' precedence, from an injected environment.
#include "aws/protocol/endpoints.hpp"

#include <gtest/gtest.h>

#include <map>

namespace ic::aws {
namespace {

EnvLookup env_of(std::map<std::string, std::string, std::less<>> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(name);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(Endpoints, ServiceOverrideWinsOverGlobalOverride) {
  const auto env = env_of({{"AWS_ENDPOINT_URL_DYNAMODB", "http://127.0.0.1:4566/"},
                           {"AWS_ENDPOINT_URL", "http://127.0.0.1:9999"}});
  EXPECT_EQ(resolve_endpoint("dynamodb", "us-east-1", env), "http://127.0.0.1:4566");
  EXPECT_EQ(resolve_endpoint("sqs", "us-east-1", env), "http://127.0.0.1:9999");
}

TEST(Endpoints, DefaultsToTheRegionalAwsEndpoint) {
  const auto env = env_of({{"AWS_ENDPOINT_URL", ""}});
  EXPECT_EQ(resolve_endpoint("dynamodb", "eu-west-1", env),
            "https://dynamodb.eu-west-1.amazonaws.com");
}

TEST(Endpoints, ServiceIdBecomesTheVariableSuffix) {
  const auto env = env_of({{"AWS_ENDPOINT_URL_DYNAMODB_STREAMS", "http://x"}});
  EXPECT_EQ(resolve_endpoint("dynamodb-streams", "r", env), "http://x");
}

TEST(Endpoints, RegionFromAwsRegionThenDefaultRegion) {
  EXPECT_EQ(
      resolve_region(env_of({{"AWS_REGION", "ap-south-1"}, {"AWS_DEFAULT_REGION", "us-east-1"}})),
      "ap-south-1");
  EXPECT_EQ(resolve_region(env_of({{"AWS_REGION", ""}, {"AWS_DEFAULT_REGION", "us-east-1"}})),
            "us-east-1");
  EXPECT_EQ(resolve_region(env_of({})), std::nullopt);
}

}  // namespace
}  // namespace ic::aws
