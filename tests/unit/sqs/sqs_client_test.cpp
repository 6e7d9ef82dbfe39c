// SqsClient over JsonClient with a recording transport: the wire target of each action, the
// long-poll wait kept inside the HTTP timeout, and batch calls that need no request.
#include "adapters/sqs/sqs_client.hpp"

#include <gtest/gtest.h>

#include "core/thread_annotations.hpp"

namespace ic::sqs {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

class RecordingTransport final : public http::HttpTransport {
 public:
  explicit RecordingTransport(std::string reply) : reply_(std::move(reply)) {}
  std::expected<http::HttpResponse, http::TransportError> send(const http::HttpRequest& request,
                                                               const http::HttpTimeouts&) override {
    MutexLock lock(mutex_);
    requests_.push_back(request);
    return http::HttpResponse{.status = 200, .headers = {}, .body = reply_};
  }
  [[nodiscard]] std::vector<http::HttpRequest> requests() const {
    MutexLock lock(mutex_);
    return requests_;
  }

 private:
  mutable Mutex mutex_;
  std::vector<http::HttpRequest> requests_ GUARDED_BY(mutex_);
  std::string reply_;
};

class FixedCredentials final : public aws::CredentialsProvider {
 public:
  std::expected<aws::Credentials, aws::AwsError> credentials() override {
    return aws::Credentials{.access_key_id = "AKID", .secret_access_key = "s"};
  }
};

struct Wiring {
  explicit Wiring(std::string reply, std::chrono::milliseconds total = 10s)
      : transport(std::move(reply)),
        client({.service = "sqs",
                .signing_name = "sqs",
                .target_prefix = std::string(kSqsTargetPrefix),
                .endpoint = "http://127.0.0.1:1",
                .region = "us-east-1",
                .timeouts = {.connect = 1s, .total = total}},
               transport, credentials, retry),
        sqs(client) {}

  [[nodiscard]] std::string target(std::size_t i) const {
    const http::HttpRequest request = transport.requests().at(i);
    for (const auto& [name, value] : request.headers) {
      if (name == "x-amz-target" || name == "X-Amz-Target") return value;
    }
    return {};
  }
  [[nodiscard]] json body(std::size_t i) const {
    return json::parse(transport.requests().at(i).body);
  }

  RecordingTransport transport;
  FixedCredentials credentials;
  aws::RetryPolicy retry{aws::RetryConfig{}};
  aws::JsonClient client;
  SqsClient sqs;
};

TEST(SqsClient, ReceiveTargetsAmazonSqsAndKeepsTheWaitInsideTheHttpTimeout) {
  Wiring wiring(R"({"Messages":[{"MessageId":"m","ReceiptHandle":"r","Body":"b"}]})", 10s);
  auto got = wiring.sqs.receive("http://q/1/src", 25, 20s);
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ(wiring.target(0), "AmazonSQS.ReceiveMessage");
  EXPECT_EQ(wiring.body(0)["WaitTimeSeconds"], 5) << "10 s timeout leaves a 5 s poll";
  EXPECT_EQ(wiring.body(0)["MaxNumberOfMessages"], 10) << "SQS allows at most 10";
}

TEST(SqsClient, AGenerousTimeoutKeepsTheFullLongPoll) {
  Wiring wiring("{}", 30s);
  auto got = wiring.sqs.receive("http://q/1/src", 3, 20s);
  ASSERT_TRUE(got);
  EXPECT_TRUE(got->empty());
  EXPECT_EQ(wiring.body(0)["WaitTimeSeconds"], 20);
  EXPECT_EQ(wiring.body(0)["MaxNumberOfMessages"], 3);
}

TEST(SqsClient, EmptyBatchesSendNothing) {
  Wiring wiring("{}");
  auto deleted = wiring.sqs.delete_batch("u", {});
  auto changed = wiring.sqs.change_visibility_batch("u", {});
  ASSERT_TRUE(deleted && changed);
  EXPECT_TRUE(deleted->empty());
  EXPECT_TRUE(changed->empty());
  EXPECT_TRUE(wiring.transport.requests().empty());
}

TEST(SqsClient, QueueSendsDeadLettersToTheDlqUrlAndDeletesOnTheSource) {
  Wiring wiring(R"({"MessageId":"new","Successful":[{"Id":"0"}]})");
  SqsQueue queue(wiring.sqs, "http://q/1/src", "http://q/1/dlq");
  ASSERT_TRUE(queue.send_to_dlq("body", {{"failureReason", {"String", "X"}}}));
  const std::vector<consumer::DeleteEntry> remove{{"m", "r"}};
  auto deleted = queue.delete_batch(remove);
  ASSERT_TRUE(deleted);
  EXPECT_TRUE(deleted->front());
  EXPECT_EQ(wiring.target(0), "AmazonSQS.SendMessage");
  EXPECT_EQ(wiring.body(0)["QueueUrl"], "http://q/1/dlq");
  EXPECT_EQ(wiring.body(0)["MessageBody"], "body");
  EXPECT_EQ(wiring.target(1), "AmazonSQS.DeleteMessageBatch");
  EXPECT_EQ(wiring.body(1)["QueueUrl"], "http://q/1/src");
}

}  // namespace
}  // namespace ic::sqs
