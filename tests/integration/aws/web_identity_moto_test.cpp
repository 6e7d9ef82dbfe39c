// Web-identity credentials against moto's STS (served by the same endpoint as SQS and DynamoDB:
// moto routes the unsigned AssumeRoleWithWebIdentity by its Action): the provider exchanges a
// token file for role credentials, and the default chain signs a DynamoDB call with them.
#include <gtest/gtest.h>

#include "aws/credentials/credentials_cache.hpp"
#include "aws/credentials/credentials_chain.hpp"
#include "aws/credentials/credentials_web_identity.hpp"
#include "aws/json_client.hpp"
#include "aws/protocol/retry_policy.hpp"
#include "event/run_blocking.hpp"
#include "http/curl_transport.hpp"
#include "testing/aws_env.hpp"
#include "testing/moto_fixture.hpp"

namespace ic::aws {
namespace {

using namespace std::chrono_literals;
using testing::FakeEnv;
using testing::lookup;
using testing::ScratchDir;

// A JWT-shaped token: moto does not verify it, real STS checks it against the OIDC provider.
constexpr std::string_view kToken =
    "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQ6cGF5bWVudHM6Y3IifQ.c2ln";

class WebIdentityMotoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(moto.reset());
    env = {{"AWS_WEB_IDENTITY_TOKEN_FILE", dir.write("token", kToken)},
           {"AWS_ROLE_ARN", "arn:aws:iam::123456789012:role/charge-recovery"},
           {"AWS_ROLE_SESSION_NAME", "integration-test"},
           {"AWS_ENDPOINT_URL_STS", moto.endpoint()},
           {"AWS_REGION", "us-east-1"},
           {"HOME", dir.path()},
           {"AWS_EC2_METADATA_DISABLED", "true"}};
  }

  testing::MotoServer& moto = testing::shared_moto();
  ScratchDir dir;
  FakeEnv env;
  http::CurlTransport curl;
  http::BlockingTransport transport{curl};  // the credential providers' fetches
};

TEST_F(WebIdentityMotoTest, ExchangesTheTokenForExpiringRoleCredentials) {
  WebIdentityCredentialsProvider provider(lookup(env), transport, real_clock());
  const auto creds = provider.credentials();
  ASSERT_TRUE(creds.has_value()) << creds.error().message;
  EXPECT_TRUE(creds->access_key_id.starts_with("ASIA")) << creds->access_key_id;
  EXPECT_FALSE(creds->secret_access_key.empty());
  EXPECT_FALSE(creds->session_token.empty());
  ASSERT_TRUE(creds->expiration.has_value());
  EXPECT_GT(*creds->expiration, std::chrono::system_clock::now() + 10min);

  // Each fetch is a new STS session: new keys.
  const auto again = provider.credentials();
  ASSERT_TRUE(again.has_value()) << again.error().message;
  EXPECT_NE(again->access_key_id, creds->access_key_id);
}

TEST_F(WebIdentityMotoTest, DefaultChainSignsADynamoDbCallWithTheRoleCredentials) {
  // As AwsStack wires it: the chain behind the cache, fetched on the cache's thread.
  CredentialsCache credentials(make_default_credentials_chain(lookup(env), transport), real_clock(),
                               real_random());
  credentials.start();
  ASSERT_TRUE(credentials.wait_for_first_refresh(20s).has_value());
  RetryPolicy retry;
  JsonClient dynamodb({.service = "dynamodb",
                       .signing_name = "dynamodb",
                       .target_prefix = "DynamoDB_20120810",
                       .endpoint = moto.endpoint(),
                       .region = "us-east-1",
                       .timeouts = {.connect = 2s, .total = 10s}},
                      curl, credentials, retry);
  const auto reply = event::run_blocking(dynamodb.call("ListTables", nlohmann::json::object()));
  ASSERT_TRUE(reply.has_value()) << reply.error().message;
  EXPECT_TRUE(reply->contains("TableNames"));
  EXPECT_EQ(credentials.active_provider(), "web-identity");
}

TEST_F(WebIdentityMotoTest, UnreachableStsIsRetryableNotAnotherProvidersKeys) {
  env["AWS_ENDPOINT_URL_STS"] = "http://127.0.0.1:1";
  WebIdentityCredentialsProvider provider(lookup(env), transport, real_clock());
  const auto creds = provider.credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().error_class, ErrorClass::Retryable);
}

}  // namespace
}  // namespace ic::aws
