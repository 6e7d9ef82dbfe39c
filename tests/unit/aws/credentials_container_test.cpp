// Container (ECS / EKS Pod Identity) provider against a local fake agent, through the real
// curl transport.
#include "aws/credentials/credentials_container.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "http/curl_transport.hpp"
#include "testing/aws_env.hpp"
#include "testing/local_http_server.hpp"

namespace ic::aws {
namespace {

using testing::expect_no_secret;
using testing::FakeEnv;
using testing::kAuthToken;
using testing::kSecretKey;
using testing::kSessionToken;
using testing::LocalHttpServer;
using testing::lookup;
using testing::ScratchDir;

std::string document(std::string_view expiration = "2026-11-30T10:00:00Z") {
  return fmt::format(
      R"({{"AccessKeyId":"ASIACONTAINER","SecretAccessKey":"{}","Token":"{}","Expiration":"{}"}})",
      kSecretKey, kSessionToken, expiration);
}

class ContainerCredentialsTest : public ::testing::Test {
 protected:
  void serve(int status, std::string body) {
    agent.routes().Get(".*", [status, body](const httplib::Request&, httplib::Response& res) {
      res.status = status;
      res.set_content(body, "application/json");
    });
    // Idle connections stay with the test thread's loop: stopping must not wait them out.
    agent.close_connections_after_each_request();
    agent.start();
  }

  LocalHttpServer agent;
  http::CurlTransport curl;
  http::BlockingTransport transport{curl};
  FakeEnv env;
  ContainerCredentialsProvider provider_for_agent() {
    return ContainerCredentialsProvider(lookup(env), transport, agent.url());
  }
};

TEST_F(ContainerCredentialsTest, RelativeUriAgainstTheAgentHost) {
  serve(200, document());
  env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"] = "/v2/credentials/task-1";
  auto provider = provider_for_agent();
  const auto creds = provider.credentials();
  ASSERT_TRUE(creds.has_value()) << creds.error().message;
  EXPECT_EQ(creds->access_key_id, "ASIACONTAINER");
  EXPECT_EQ(creds->secret_access_key, kSecretKey);
  EXPECT_EQ(creds->session_token, kSessionToken);
  ASSERT_TRUE(creds->expiration.has_value());
  EXPECT_EQ(*creds->expiration,
            std::chrono::sys_days{std::chrono::year{2026} / 11 / 30} + std::chrono::hours{10});
  const auto requests = agent.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].path, "/v2/credentials/task-1");
  EXPECT_EQ(requests[0].header("Authorization"), "");
}

TEST_F(ContainerCredentialsTest, RelativeUriWinsOverFullUri) {
  serve(200, document());
  env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"] = "/relative";
  env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = agent.url() + "/full";
  ASSERT_TRUE(provider_for_agent().credentials().has_value());
  EXPECT_EQ(agent.requests().at(0).path, "/relative");
}

TEST_F(ContainerCredentialsTest, FullUriWithLiteralToken) {
  serve(200, document());
  env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = agent.url() + "/v1/credentials";
  env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = std::string(kAuthToken);
  ContainerCredentialsProvider provider(lookup(env), transport);  // default agent host unused
  ASSERT_TRUE(provider.credentials().has_value());
  const auto requests = agent.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].path, "/v1/credentials");
  EXPECT_EQ(requests[0].header("Authorization"), kAuthToken);
}

TEST_F(ContainerCredentialsTest, TokenFileWinsAndIsReReadOnEveryFetch) {
  serve(200, document());
  ScratchDir dir;
  env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = agent.url() + "/v1/credentials";
  env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = "literal-token";
  env["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = dir.write("token", "first-token\n");
  auto provider = provider_for_agent();
  ASSERT_TRUE(provider.credentials().has_value());
  dir.write("token", "rotated-token");  // EKS rotates the projected token
  ASSERT_TRUE(provider.credentials().has_value());
  const auto requests = agent.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].header("Authorization"), "first-token");
  EXPECT_EQ(requests[1].header("Authorization"), "rotated-token");
}

TEST_F(ContainerCredentialsTest, UnreadableTokenFileFailsWithoutRequest) {
  serve(200, document());
  env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = agent.url() + "/v1/credentials";
  env["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = "/nonexistent/ic-token";
  const auto creds = provider_for_agent().credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "InvalidCredentials");
  EXPECT_TRUE(agent.requests().empty());
}

TEST_F(ContainerCredentialsTest, OversizedTokenFileIsRefusedWithoutRequest) {
  serve(200, document());
  ScratchDir dir;
  env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = agent.url() + "/v1/credentials";
  env["AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE"] = dir.write("token", std::string(20'001, 'a'));
  const auto creds = provider_for_agent().credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "InvalidCredentials");
  EXPECT_EQ(creds.error().message,
            "container credentials: AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE is larger than 20000 "
            "bytes");
  EXPECT_TRUE(agent.requests().empty());
}

TEST_F(ContainerCredentialsTest, TokenWithLineBreakIsRefusedAndNotEchoed) {
  serve(200, document());
  env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = agent.url() + "/v1/credentials";
  env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = std::string(kAuthToken) + "\r\nX-Injected: 1";
  const auto creds = provider_for_agent().credentials();
  ASSERT_FALSE(creds.has_value());
  expect_no_secret(creds.error());
  EXPECT_TRUE(agent.requests().empty());
}

TEST_F(ContainerCredentialsTest, NotConfiguredIsNotFound) {
  const auto creds = ContainerCredentialsProvider(lookup(env), transport).credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "CredentialsNotFound");
}

TEST_F(ContainerCredentialsTest, DisallowedFullUriIsRefusedBeforeSending) {
  env["AWS_CONTAINER_CREDENTIALS_FULL_URI"] = "http://example.com/creds";
  env["AWS_CONTAINER_AUTHORIZATION_TOKEN"] = std::string(kAuthToken);
  const auto creds = ContainerCredentialsProvider(lookup(env), transport).credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "InvalidCredentials");
  expect_no_secret(creds.error());
}

TEST(ContainerFullUri, AllowedHostsFollowTheSdks) {
  for (const auto* url :
       {"https://creds.example.com/x", "http://127.0.0.1:8080/x", "http://127.1.2.3/x",
        "http://localhost/x", "http://[::1]:80/x", "http://169.254.170.2/v2/x",
        "http://169.254.170.23/v1/credentials", "http://[fd00:ec2::23]/v1/credentials"}) {
    const auto parsed = http::parse_url(url);
    ASSERT_TRUE(parsed.has_value()) << url;
    EXPECT_TRUE(container_full_uri_allowed(*parsed)) << url;
  }
  for (const auto* url :
       {"http://example.com/x", "http://169.254.169.254/latest", "http://127.0.0.1.evil.com/x",
        "http://0x7f.0.0.1/x", "http://127.0.0.1./x", "http://10.0.0.1/x", "ftp://127.0.0.1/x",
        "http://user@evil.com/x"}) {
    const auto parsed = http::parse_url(url);
    ASSERT_TRUE(parsed.has_value()) << url;
    EXPECT_FALSE(container_full_uri_allowed(*parsed)) << url;
  }
}

TEST_F(ContainerCredentialsTest, NotFoundIsPermanent) {
  serve(404, "{}");
  env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"] = "/v2/credentials/gone";
  const auto creds = provider_for_agent().credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().error_class, ErrorClass::Permanent);
  EXPECT_EQ(creds.error().http_status, 404);
}

TEST_F(ContainerCredentialsTest, ServerErrorIsRetryableAndBodyNotEchoed) {
  serve(500, document());  // a body carrying secrets must not leak into the error
  env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"] = "/v2/credentials/x";
  const auto creds = provider_for_agent().credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().error_class, ErrorClass::Retryable);
  EXPECT_EQ(creds.error().http_status, 500);
  expect_no_secret(creds.error());
}

TEST_F(ContainerCredentialsTest, MissingFieldsAreInvalidAndNotEchoed) {
  serve(200, fmt::format(R"({{"AccessKeyId":"ASIA","Token":"{}"}})", kSessionToken));
  env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"] = "/v2/credentials/x";
  const auto creds = provider_for_agent().credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "InvalidCredentials");
  expect_no_secret(creds.error());
}

TEST_F(ContainerCredentialsTest, MalformedDocumentOrExpirationIsInvalid) {
  serve(200, document("next tuesday"));
  env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"] = "/v2/credentials/x";
  const auto creds = provider_for_agent().credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "InvalidCredentials");
  expect_no_secret(creds.error());
}

TEST_F(ContainerCredentialsTest, UnreachableAgentIsRetryable) {
  agent.start();
  const auto url = agent.url();
  agent.stop();  // the port is now closed: connection refused
  env["AWS_CONTAINER_CREDENTIALS_RELATIVE_URI"] = "/v2/credentials/x";
  const auto creds = ContainerCredentialsProvider(lookup(env), transport, url).credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().error_class, ErrorClass::Retryable);
  EXPECT_EQ(creds.error().code, "CredentialsFetchFailed");
}

}  // namespace
}  // namespace ic::aws
