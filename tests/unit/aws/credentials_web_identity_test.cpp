// The web-identity (IRSA) provider over a scripted transport: configuration, the token file
// re-read on every fetch, the STS endpoint, and failures as classified values without secrets.
#include "aws/credentials/credentials_web_identity.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "aws/credentials/credentials_cache.hpp"
#include "aws/credentials/credentials_chain.hpp"
#include "testing/aws_env.hpp"
#include "testing/clocks.hpp"
#include "testing/fixed_random.hpp"
#include "testing/scripted_transport.hpp"

namespace ic::aws {
namespace {

using testing::expect_no_secret;
using testing::FakeEnv;
using testing::kAuthToken;
using testing::kSecretKey;
using testing::kSessionToken;
using testing::lookup;
using testing::ScratchDir;
using testing::ScriptedTransport;

constexpr std::string_view kRole = "arn:aws:iam::123456789012:role/charge-recovery";

std::string sts_reply(std::string_view key_id, std::string_view expiration) {
  return fmt::format(
      "<AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>"
      "<AccessKeyId>{}</AccessKeyId><SecretAccessKey>{}</SecretAccessKey>"
      "<SessionToken>{}</SessionToken><Expiration>{}</Expiration>"
      "</Credentials></AssumeRoleWithWebIdentityResult></AssumeRoleWithWebIdentityResponse>",
      key_id, kSecretKey, kSessionToken, expiration);
}

// The form body's value of `name`, still encoded.
std::string form_value(const std::string& body, std::string_view name) {
  const auto at = body.find(fmt::format("&{}=", name));
  if (at == std::string::npos) return {};
  const auto start = at + name.size() + 2;
  return body.substr(start, body.find('&', start) - start);
}

class WebIdentityTest : public ::testing::Test {
 protected:
  void configure(std::string_view token = kAuthToken) {
    env["AWS_WEB_IDENTITY_TOKEN_FILE"] = dir.write("token", token);
    env["AWS_ROLE_ARN"] = std::string(kRole);
  }
  std::expected<Credentials, AwsError> fetch() {
    return WebIdentityCredentialsProvider(lookup(env), transport.blocking(), clock).credentials();
  }

  ScratchDir dir;
  FakeEnv env;
  ScriptedTransport transport;
  testing::ManualClock clock;  // never moves
};

TEST_F(WebIdentityTest, NotConfiguredIsNotFoundWithoutARequest) {
  const auto creds = fetch();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "CredentialsNotFound");
  EXPECT_TRUE(transport.requests().empty());
}

TEST_F(WebIdentityTest, HalfConfiguredIsInvalid) {
  env["AWS_ROLE_ARN"] = std::string(kRole);
  EXPECT_EQ(fetch().error().code, "InvalidCredentials");
  env.erase("AWS_ROLE_ARN");
  env["AWS_WEB_IDENTITY_TOKEN_FILE"] = dir.write("token", "t");
  EXPECT_EQ(fetch().error().code, "InvalidCredentials");
  EXPECT_TRUE(transport.requests().empty());
}

TEST_F(WebIdentityTest, ExchangesTheTokenForRoleCredentials) {
  configure(std::string(kAuthToken) + "\n");
  env["AWS_REGION"] = "ap-south-1";
  transport.answer(200, sts_reply("ASIAWEB", "2026-11-30T01:00:00Z"));
  const auto creds = fetch();
  ASSERT_TRUE(creds.has_value()) << creds.error().message;
  EXPECT_EQ(creds->access_key_id, "ASIAWEB");
  EXPECT_EQ(creds->session_token, kSessionToken);
  ASSERT_TRUE(creds->expiration.has_value());

  const auto requests = transport.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].url, "https://sts.ap-south-1.amazonaws.com/");
  EXPECT_EQ(form_value(requests[0].body, "WebIdentityToken"), kAuthToken);  // trimmed
  EXPECT_EQ(form_value(requests[0].body, "RoleArn"),
            "arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fcharge-recovery");
  EXPECT_EQ(form_value(requests[0].body, "RoleSessionName"), "charge-recovery-1764460800000");
}

TEST_F(WebIdentityTest, RereadsTheTokenFileOnEveryFetch) {
  configure("first-token");
  transport.answer(200, sts_reply("ASIA1", "2026-11-30T01:00:00Z"));
  transport.answer(200, sts_reply("ASIA2", "2026-11-30T02:00:00Z"));
  ASSERT_EQ(fetch()->access_key_id, "ASIA1");
  dir.write("token", "rotated-token");  // the kubelet rotates the projected token
  ASSERT_EQ(fetch()->access_key_id, "ASIA2");
  const auto requests = transport.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(form_value(requests[0].body, "WebIdentityToken"), "first-token");
  EXPECT_EQ(form_value(requests[1].body, "WebIdentityToken"), "rotated-token");
}

TEST_F(WebIdentityTest, EndpointOverridesThenRegionalThenGlobal) {
  configure();
  for (int i = 0; i < 4; ++i) transport.answer(200, sts_reply("ASIA", "2026-11-30T01:00:00Z"));
  env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:5000/";
  env["AWS_ENDPOINT_URL_STS"] = "http://127.0.0.1:5001";
  ASSERT_TRUE(fetch().has_value());
  env.erase("AWS_ENDPOINT_URL_STS");
  ASSERT_TRUE(fetch().has_value());
  env.erase("AWS_ENDPOINT_URL");
  env["AWS_DEFAULT_REGION"] = "eu-west-1";
  ASSERT_TRUE(fetch().has_value());
  env.erase("AWS_DEFAULT_REGION");
  ASSERT_TRUE(fetch().has_value());
  const auto requests = transport.requests();
  ASSERT_EQ(requests.size(), 4u);
  EXPECT_EQ(requests[0].url, "http://127.0.0.1:5001/");
  EXPECT_EQ(requests[1].url, "http://127.0.0.1:5000/");
  EXPECT_EQ(requests[2].url, "https://sts.eu-west-1.amazonaws.com/");
  EXPECT_EQ(requests[3].url, "https://sts.amazonaws.com/");
}

TEST_F(WebIdentityTest, SessionNameFromTheEnvironmentIsCheckedAndUsed) {
  configure();
  env["AWS_ROLE_SESSION_NAME"] = "pod-abc@payments";
  transport.answer(200, sts_reply("ASIA", "2026-11-30T01:00:00Z"));
  ASSERT_TRUE(fetch().has_value());
  EXPECT_EQ(form_value(transport.requests().at(0).body, "RoleSessionName"), "pod-abc%40payments");
  env["AWS_ROLE_SESSION_NAME"] = "no spaces";
  EXPECT_EQ(fetch().error().code, "InvalidCredentials");
  EXPECT_EQ(transport.requests().size(), 1u);
}

TEST_F(WebIdentityTest, UnusableTokenFilesFailWithoutARequest) {
  env["AWS_ROLE_ARN"] = std::string(kRole);
  for (const std::string& file : {std::string("/nonexistent/token"), dir.write("empty", " \n"),
                                  dir.write("huge", std::string(20'001, 'x'))}) {
    env["AWS_WEB_IDENTITY_TOKEN_FILE"] = file;
    const auto creds = fetch();
    ASSERT_FALSE(creds.has_value()) << file;
    EXPECT_EQ(creds.error().code, "InvalidCredentials");
  }
  EXPECT_TRUE(transport.requests().empty());
}

TEST_F(WebIdentityTest, StsRefusalIsClassifiedAndNeverEchoesTheToken) {
  configure();
  transport.answer(400, fmt::format("<ErrorResponse><Error><Code>InvalidIdentityToken</Code>"
                                    "<Message>bad token {}</Message></Error></ErrorResponse>",
                                    kAuthToken));
  transport.answer(400,
                   "<ErrorResponse><Error><Code>IDPCommunicationError</Code></Error>"
                   "</ErrorResponse>");
  const auto refused = fetch();
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().code, "InvalidIdentityToken");
  EXPECT_EQ(refused.error().error_class, ErrorClass::Permanent);
  EXPECT_NE(refused.error().message.find("bad token <token>"), std::string::npos);
  expect_no_secret(refused.error());
  EXPECT_EQ(fetch().error().error_class, ErrorClass::Retryable);
}

TEST_F(WebIdentityTest, TransportFailureIsRetryableAndAMalformedReplyInvalid) {
  configure();
  transport.fail(http::TransportFailure::CouldNotConnect);
  transport.answer(200, "<html>captive portal</html>");
  const auto unreachable = fetch();
  ASSERT_FALSE(unreachable.has_value());
  EXPECT_EQ(unreachable.error().error_class, ErrorClass::Retryable);
  const auto malformed = fetch();
  ASSERT_FALSE(malformed.has_value());
  EXPECT_EQ(malformed.error().code, "InvalidCredentials");
}

// The SDK order: the environment's keys first, then web identity, before the shared files.
TEST(DefaultChainOrder, WebIdentityAfterEnvironmentBeforeProfile) {
  ScratchDir dir;
  dir.write(".aws/credentials", "[default]\naws_access_key_id=PROFILE\naws_secret_access_key=p\n");
  FakeEnv env{{"HOME", dir.path()},
              {"AWS_WEB_IDENTITY_TOKEN_FILE", dir.write("token", "t")},
              {"AWS_ROLE_ARN", std::string(kRole)},
              {"AWS_EC2_METADATA_DISABLED", "true"}};
  ScriptedTransport transport;
  transport.answer(200, sts_reply("ASIAWEB", "2026-11-30T01:00:00Z"));
  testing::ManualClock clock;  // never moves
  auto chain = make_default_credentials_chain(lookup(env), transport.blocking(), clock);
  EXPECT_EQ(chain->credentials()->access_key_id, "ASIAWEB");
  EXPECT_EQ(chain->active_provider(), "web-identity");

  env["AWS_ACCESS_KEY_ID"] = "ENVIRONMENT";
  env["AWS_SECRET_ACCESS_KEY"] = "e";
  auto env_first = make_default_credentials_chain(lookup(env), transport.blocking(), clock);
  EXPECT_EQ(env_first->credentials()->access_key_id, "ENVIRONMENT");
  EXPECT_EQ(transport.requests().size(), 1u);
}

// Refresh before expiry through the cache: the refresh is a new STS call with the rotated token.
TEST(DefaultChainOrder, WebIdentityIsRefreshedBeforeExpiryWithTheRotatedToken) {
  ScratchDir dir;
  FakeEnv env{{"HOME", dir.path()},
              {"AWS_WEB_IDENTITY_TOKEN_FILE", dir.write("token", "token-1")},
              {"AWS_ROLE_ARN", std::string(kRole)},
              {"AWS_EC2_METADATA_DISABLED", "true"}};
  ScriptedTransport transport;
  transport.answer(200, sts_reply("ASIA1", "2026-11-30T01:00:00Z"));
  transport.answer(200, sts_reply("ASIA2", "2026-11-30T02:00:00Z"));
  testing::ManualClock clock{std::chrono::sys_days{std::chrono::year{2026} / 11 / 30}};
  testing::FixedRandom random{1.0};
  CredentialsCache cache(make_default_credentials_chain(lookup(env), transport.blocking(), clock),
                         clock, random);
  ASSERT_TRUE(cache.refresh_if_due());
  EXPECT_EQ(cache.credentials()->access_key_id, "ASIA1");
  dir.write("token", "token-2");
  clock.advance(std::chrono::minutes{44});
  EXPECT_FALSE(cache.refresh_if_due());  // cached until 15 min before expiry
  EXPECT_EQ(cache.credentials()->access_key_id, "ASIA1");
  clock.advance(std::chrono::minutes{1});
  EXPECT_TRUE(cache.refresh_if_due());
  EXPECT_EQ(cache.credentials()->access_key_id, "ASIA2");
  const auto requests = transport.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(form_value(requests[1].body, "WebIdentityToken"), "token-2");
}

}  // namespace
}  // namespace ic::aws
