// SigV4 end to end: a moto that enforces signatures (after INITIAL_NO_AUTH_ACTION_COUNT
// unauthenticated requests, spent creating an IAM user) accepts our signed DynamoDB requests
// and rejects the same requests signed with a wrong secret, which we classify as permanent.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdio>

#include "adapters/dynamodb/dynamodb_store.hpp"
#include "adapters/dynamodb/table_provisioner.hpp"
#include "event/run_blocking.hpp"
#include "testing/moto_fixture.hpp"

namespace ic::dynamodb {
namespace {

using namespace std::chrono_literals;
using testing::kTable;
using testing::MotoServer;
using testing::StaticCredentials;

// The three IAM calls of moto_iam_user.py are the only unauthenticated requests allowed.
constexpr const char* kNoAuthActions = "3";

std::string run(const std::string& command) {
  std::string output;
  FILE* pipe = ::popen(command.c_str(), "r");
  if (pipe == nullptr) return output;
  char buffer[512];
  while (std::fgets(buffer, sizeof buffer, pipe) != nullptr) output += buffer;
  ::pclose(pipe);
  return output;
}

class CountingObserver final : public aws::JsonClientObserver {
 public:
  void on_attempt(const aws::AttemptEvent&) override { ++attempts; }
  std::atomic<int> attempts{0};
};

class SigningAgainstMoto : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    moto_ = MotoServer::start({{"INITIAL_NO_AUTH_ACTION_COUNT", kNoAuthActions}}).release();
    const std::string root = IC_SOURCE_DIR;
    const auto key =
        nlohmann::json::parse(run(root + "/.venv/bin/python " + root +
                                  "/tests/testing/moto_iam_user.py " + moto_->endpoint()),
                              nullptr, false);
    ASSERT_TRUE(key.is_object()) << "could not create an IAM user in moto";
    key_id_ = key.at("AccessKeyId").get<std::string>();
    secret_ = key.at("SecretAccessKey").get<std::string>();
  }
  static void TearDownTestSuite() {
    delete moto_;
    moto_ = nullptr;
  }

  aws::JsonClient client(aws::CredentialsProvider& credentials, CountingObserver& observer) {
    return aws::JsonClient({.service = "dynamodb",
                            .signing_name = "dynamodb",
                            .target_prefix = "DynamoDB_20120810",
                            .endpoint = moto_->endpoint(),
                            .region = "us-east-1"},
                           curl_, credentials, retry_, {.observer = &observer});
  }

  static MotoServer* moto_;
  static std::string key_id_;
  static std::string secret_;
  http::CurlTransport curl_;
  aws::RetryPolicy retry_{{.transient_base = 5ms, .throttling_base = 5ms}};
};

MotoServer* SigningAgainstMoto::moto_ = nullptr;
std::string SigningAgainstMoto::key_id_;
std::string SigningAgainstMoto::secret_;

TEST_F(SigningAgainstMoto, CorrectlySignedRequestsAreAccepted) {
  StaticCredentials credentials(key_id_, secret_);
  CountingObserver observer;
  auto dynamodb = client(credentials, observer);
  auto provisioned = provision_table(dynamodb, kTable, {});
  ASSERT_TRUE(provisioned) << provisioned.error().code << ": " << provisioned.error().message;
  DynamoDbIdempotencyStore store(dynamodb, {.name = kTable});
  const auto claimed = event::run_blocking(store.claim({.key = "CHG-SIGNED",
                                                        .payload_hash = "h",
                                                        .token = "t",
                                                        .owner = "o",
                                                        .now = Instant{Millis{1000}},
                                                        .lease = 10s}));
  ASSERT_TRUE(claimed) << claimed.error().code << ": " << claimed.error().message;
  EXPECT_EQ(claimed->outcome, idempotency::ClaimOutcome::Acquired);
}

TEST_F(SigningAgainstMoto, WrongSecretIsAPermanentSignatureError) {
  StaticCredentials credentials(key_id_, secret_ + "-wrong");
  CountingObserver observer;
  auto dynamodb = client(credentials, observer);
  const auto reply = event::run_blocking(dynamodb.call("ListTables", nlohmann::json::object()));
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().code, "SignatureDoesNotMatch") << reply.error().response_body;
  EXPECT_EQ(reply.error().http_status, 403);
  EXPECT_EQ(reply.error().error_class, ErrorClass::Permanent);
  EXPECT_EQ(observer.attempts.load(), 1) << "a signature error must not be retried";
}

}  // namespace
}  // namespace ic::dynamodb
