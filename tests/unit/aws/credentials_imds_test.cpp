// IMDSv2 provider against a local fake metadata service, through the real curl transport.
#include "aws/credentials/credentials_imds.hpp"

#include <gtest/gtest.h>

#include "http/curl_transport.hpp"
#include "testing/fake_imds.hpp"

namespace ic::aws {
namespace {

using testing::expect_no_secret;
using testing::FakeEnv;
using testing::FakeImds;
using testing::kSecretKey;
using testing::kSessionToken;
using testing::LocalHttpServer;
using testing::lookup;

class ImdsCredentialsTest : public ::testing::Test {
 protected:
  FakeImds imds;
  http::CurlTransport curl;
  http::BlockingTransport transport{curl};
  FakeEnv env{{"AWS_EC2_METADATA_SERVICE_ENDPOINT", imds.url()}};
  ImdsCredentialsProvider provider{lookup(env), transport};
};

TEST_F(ImdsCredentialsTest, TokenThenRoleThenCredentials) {
  const auto creds = provider.credentials();
  ASSERT_TRUE(creds.has_value()) << creds.error().message;
  EXPECT_EQ(creds->access_key_id, "ASIAIMDS1");
  EXPECT_EQ(creds->secret_access_key, kSecretKey);
  EXPECT_EQ(creds->session_token, kSessionToken);
  EXPECT_EQ(creds->expiration,
            std::chrono::sys_days{std::chrono::year{2026} / 11 / 30} + std::chrono::hours{10});

  const auto requests = imds.requests();
  ASSERT_EQ(requests.size(), 3u);
  EXPECT_EQ(requests[0].method, "PUT");
  EXPECT_EQ(requests[0].path, "/latest/api/token");
  EXPECT_EQ(requests[0].header("x-aws-ec2-metadata-token-ttl-seconds"), "21600");
  EXPECT_EQ(requests[1].method, "GET");
  EXPECT_EQ(requests[1].path, "/latest/meta-data/iam/security-credentials/");
  EXPECT_EQ(requests[1].header("x-aws-ec2-metadata-token"), FakeImds::kToken);
  EXPECT_EQ(requests[2].path, "/latest/meta-data/iam/security-credentials/app-role");
  EXPECT_EQ(requests[2].header("x-aws-ec2-metadata-token"), FakeImds::kToken);
}

TEST_F(ImdsCredentialsTest, EndpointWithTrailingSlash) {
  env["AWS_EC2_METADATA_SERVICE_ENDPOINT"] = imds.url() + "/";
  ASSERT_TRUE(provider.credentials().has_value());
  EXPECT_EQ(imds.requests().at(0).path, "/latest/api/token");
}

TEST_F(ImdsCredentialsTest, DisabledMeansNoRequest) {
  for (const auto* value : {"true", "TRUE", "True"}) {
    env["AWS_EC2_METADATA_DISABLED"] = value;
    const auto creds = provider.credentials();
    ASSERT_FALSE(creds.has_value());
    EXPECT_EQ(creds.error().code, "CredentialsNotFound");
  }
  EXPECT_TRUE(imds.requests().empty());
  env["AWS_EC2_METADATA_DISABLED"] = "false";
  EXPECT_TRUE(provider.credentials().has_value());
}

TEST_F(ImdsCredentialsTest, FailureCodeInsideA200IsInvalid) {
  imds.set_code("AssumeRoleUnauthorizedAccess");
  const auto creds = provider.credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "InvalidCredentials");
  EXPECT_NE(creds.error().message.find("AssumeRoleUnauthorizedAccess"), std::string::npos);
  expect_no_secret(creds.error());
}

TEST_F(ImdsCredentialsTest, ServerErrorIsRetryable) {
  imds.set_credentials_status(500);
  const auto creds = provider.credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().error_class, ErrorClass::Retryable);
  EXPECT_EQ(creds.error().http_status, 500);
}

TEST_F(ImdsCredentialsTest, RoleNotFoundIsPermanent) {
  imds.set_credentials_status(404);
  const auto creds = provider.credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().error_class, ErrorClass::Permanent);
}

// A metadata service that refuses tokens (IMDSv1 only, or a hop limit hit) is not asked
// without one.
TEST(ImdsCredentials, RefusedTokenMeansNoUnauthenticatedFallback) {
  LocalHttpServer server;
  server.routes().Put("/latest/api/token",
                      [](const httplib::Request&, httplib::Response& res) { res.status = 403; });
  server.routes().Get(".*", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("app-role", "text/plain");
  });
  // Idle connections stay with the test thread's loop: stopping must not wait them out.
  server.close_connections_after_each_request();
  server.start();
  http::CurlTransport curl;
  http::BlockingTransport transport{curl};
  FakeEnv env{{"AWS_EC2_METADATA_SERVICE_ENDPOINT", server.url()}};
  const auto creds = ImdsCredentialsProvider(lookup(env), transport).credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().http_status, 403);
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "PUT");
}

TEST(ImdsCredentials, NoRoleAttachedIsNotFound) {
  LocalHttpServer server;
  server.routes().Put("/latest/api/token", [](const httplib::Request&, httplib::Response& res) {
    res.set_content("tok", "text/plain");
  });
  server.routes().Get(
      "/latest/meta-data/iam/security-credentials/",
      [](const httplib::Request&, httplib::Response& res) { res.set_content("", "text/plain"); });
  server.close_connections_after_each_request();
  server.start();
  http::CurlTransport curl;
  http::BlockingTransport transport{curl};
  FakeEnv env{{"AWS_EC2_METADATA_SERVICE_ENDPOINT", server.url()}};
  const auto creds = ImdsCredentialsProvider(lookup(env), transport).credentials();
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "CredentialsNotFound");
}

}  // namespace
}  // namespace ic::aws
