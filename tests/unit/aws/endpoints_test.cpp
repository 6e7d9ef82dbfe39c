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

TEST(Endpoints, PartitionsGiveTheirDnsSuffix) {
  EXPECT_EQ(default_endpoint("sqs", "cn-north-1", {}), "https://sqs.cn-north-1.amazonaws.com.cn");
  EXPECT_EQ(default_endpoint("dynamodb", "us-gov-west-1", {}),
            "https://dynamodb.us-gov-west-1.amazonaws.com");
  EXPECT_EQ(default_endpoint("sts", "us-iso-east-1", {}), "https://sts.us-iso-east-1.c2s.ic.gov");
  EXPECT_EQ(default_endpoint("sqs", "us-isob-east-1", {}),
            "https://sqs.us-isob-east-1.sc2s.sgov.gov");
}

TEST(Endpoints, FipsAndDualStackFlagsFromTheEnvironment) {
  const auto both =
      env_of({{"AWS_USE_FIPS_ENDPOINT", "TRUE"}, {"AWS_USE_DUALSTACK_ENDPOINT", "true"}});
  EXPECT_EQ(resolve_endpoint("dynamodb", "cn-northwest-1", both),
            "https://dynamodb-fips.cn-northwest-1.api.amazonwebservices.com.cn");
  const auto fips =
      env_of({{"AWS_USE_FIPS_ENDPOINT", "true"}, {"AWS_USE_DUALSTACK_ENDPOINT", "false"}});
  EXPECT_EQ(resolve_endpoint("sqs", "us-east-1", fips), "https://sqs-fips.us-east-1.amazonaws.com");
  // GovCloud serves FIPS on the plain host unless dual-stack is asked for too.
  EXPECT_EQ(resolve_endpoint("sqs", "us-gov-west-1", fips),
            "https://sqs.us-gov-west-1.amazonaws.com");
  EXPECT_EQ(resolve_endpoint("sts", "us-gov-east-1", fips),
            "https://sts.us-gov-east-1.amazonaws.com");
  EXPECT_EQ(resolve_endpoint("dynamodb", "us-gov-west-1", fips),
            "https://dynamodb.us-gov-west-1.amazonaws.com");
  EXPECT_EQ(resolve_endpoint("sqs", "us-iso-east-1", fips),
            "https://sqs-fips.us-iso-east-1.c2s.ic.gov");
  // An override still wins over the flags.
  const auto overridden =
      env_of({{"AWS_USE_FIPS_ENDPOINT", "true"}, {"AWS_ENDPOINT_URL", "http://h:1"}});
  EXPECT_EQ(resolve_endpoint("sqs", "us-east-1", overridden), "http://h:1");
  EXPECT_EQ(resolve_endpoint("sqs", "eu-west-1", env_of({{"AWS_USE_DUALSTACK_ENDPOINT", "1"}})),
            "https://sqs.eu-west-1.amazonaws.com")
      << "only true enables a flag";
}

}  // namespace
}  // namespace ic::aws
