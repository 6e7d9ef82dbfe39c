// SqsClient over JsonClient with a recording transport: the wire target of each action, the
// long-poll wait kept inside the HTTP timeout, batch calls that need no request, and failures
// handed on as the AWS client classified them.
#include "adapters/sqs/sqs_client.hpp"

#include <gtest/gtest.h>

#include "core/thread_annotations.hpp"
#include "event/run_blocking.hpp"
#include "testing/scripted_transport.hpp"
#include "testing/sqs_wiring.hpp"

namespace ic::sqs {
namespace {

using namespace std::chrono_literals;
using event::run_blocking;
using nlohmann::json;

class RecordingTransport final : public http::AsyncHttpTransport {
 public:
  RecordingTransport(std::string reply, long status) : reply_(std::move(reply)), status_(status) {}
  Task<http::HttpResult> send(const http::HttpRequest& request,
                              const http::HttpTimeouts&) override {
    MutexLock lock(mutex_);
    requests_.push_back(request);
    co_return http::HttpResponse{.status = status_, .headers = {}, .body = reply_};
  }
  [[nodiscard]] std::vector<http::HttpRequest> requests() const {
    MutexLock lock(mutex_);
    return requests_;
  }

 private:
  mutable Mutex mutex_;
  std::vector<http::HttpRequest> requests_ GUARDED_BY(mutex_);
  std::string reply_;
  long status_;
};

struct Wiring : testing::SqsWiring<RecordingTransport> {
  explicit Wiring(std::string reply, std::chrono::milliseconds total = 10s, long status = 200)
      : SqsWiring(total, std::move(reply), status) {}

  [[nodiscard]] std::string target(std::size_t i) const {
    return testing::target_of(transport.requests().at(i));
  }
  [[nodiscard]] json body(std::size_t i) const {
    return json::parse(transport.requests().at(i).body);
  }
};

TEST(SqsClient, ReceiveTargetsAmazonSqsAndKeepsTheWaitInsideTheHttpTimeout) {
  Wiring wiring(R"({"Messages":[{"MessageId":"m","ReceiptHandle":"r","Body":"b"}]})", 10s);
  auto got = run_blocking(wiring.sqs.receive("http://q/1/src", 25, 20s));
  ASSERT_TRUE(got);
  ASSERT_EQ(got->size(), 1u);
  EXPECT_EQ(wiring.target(0), "AmazonSQS.ReceiveMessage");
  EXPECT_EQ(wiring.body(0)["WaitTimeSeconds"], 5) << "10 s timeout leaves a 5 s poll";
  EXPECT_EQ(wiring.body(0)["MaxNumberOfMessages"], 10) << "SQS allows at most 10";
}

TEST(SqsClient, AGenerousTimeoutKeepsTheFullLongPoll) {
  Wiring wiring("{}", 30s);
  auto got = run_blocking(wiring.sqs.receive("http://q/1/src", 3, 20s));
  ASSERT_TRUE(got);
  EXPECT_TRUE(got->empty());
  EXPECT_EQ(wiring.body(0)["WaitTimeSeconds"], 20);
  EXPECT_EQ(wiring.body(0)["MaxNumberOfMessages"], 3);
}

TEST(SqsClient, EmptyBatchesSendNothing) {
  Wiring wiring("{}");
  auto deleted = run_blocking(wiring.sqs.delete_batch("u", {}));
  auto changed = run_blocking(wiring.sqs.change_visibility_batch("u", {}));
  ASSERT_TRUE(deleted && changed);
  EXPECT_TRUE(deleted->empty());
  EXPECT_TRUE(changed->empty());
  EXPECT_TRUE(wiring.transport.requests().empty());
}

TEST(SqsClient, QueueSendsDeadLettersToTheDlqUrlAndDeletesOnTheSource) {
  Wiring wiring(R"({"MessageId":"new","Successful":[{"Id":"0"}]})");
  SqsQueue queue(wiring.sqs, "http://q/1/src", "http://q/1/dlq");
  ASSERT_TRUE(run_blocking(queue.send_to_dlq("body", {{"failureReason", {"String", "X"}}})));
  const std::vector<consumer::DeleteEntry> remove{{"m", "r"}};
  auto deleted = run_blocking(queue.delete_batch(remove));
  ASSERT_TRUE(deleted);
  EXPECT_TRUE(deleted->front());
  // The DLQ's size limit first (this reply has none, so the copy goes out unchecked).
  EXPECT_EQ(wiring.target(0), "AmazonSQS.GetQueueAttributes");
  EXPECT_EQ(wiring.body(0)["QueueUrl"], "http://q/1/dlq");
  EXPECT_EQ(wiring.target(1), "AmazonSQS.SendMessage");
  EXPECT_EQ(wiring.body(1)["QueueUrl"], "http://q/1/dlq");
  EXPECT_EQ(wiring.body(1)["MessageBody"], "body");
  EXPECT_EQ(wiring.target(2), "AmazonSQS.DeleteMessageBatch");
  EXPECT_EQ(wiring.body(2)["QueueUrl"], "http://q/1/src");
}

// Nothing translates an SQS failure: the caller gets the AWS client's class, code, message and
// ambiguity as they are.
TEST(SqsClient, FailuresReachTheCallerAsTheAwsClientClassifiedThem) {
  struct Case {
    long status;
    std::string code;
    ErrorClass error_class;
    bool ambiguous;
  };
  for (const Case& c :
       {Case{400, "RequestThrottled", ErrorClass::Throttling, false},
        Case{400, "AWS.SimpleQueueService.NonExistentQueue", ErrorClass::Permanent, false},
        Case{503, "ServiceUnavailable", ErrorClass::Retryable, true}}) {
    Wiring wiring(json{{"__type", "com.amazonaws.sqs#" + c.code}, {"message", "m"}}.dump(), 10s,
                  c.status);
    const auto url = run_blocking(wiring.sqs.get_queue_url("q"));
    ASSERT_FALSE(url) << c.code;
    EXPECT_EQ(url.error().error_class, c.error_class) << c.code;
    EXPECT_EQ(url.error().code, c.code);
    EXPECT_EQ(url.error().message, "m") << c.code;
    EXPECT_EQ(url.error().ambiguous, c.ambiguous) << c.code;
  }
}

// A 2xx reply of unexpected shape is an error value, flagged as possibly taken effect: the
// messages may have been received or sent all the same.
TEST(SqsClient, RepliesOfUnexpectedShapeAreAmbiguousErrorsNotExceptions) {
  for (const char* body :
       {"[]", "null", R"({"Messages":{}})", R"({"Messages":[1]})",
        R"({"Messages":[{"MessageId":"m","ReceiptHandle":"r","Attributes":[]}]})",
        R"({"Messages":[{"MessageId":"m","ReceiptHandle":"r",)"
        R"("MessageAttributes":{"a":"x"}}]})"}) {
    Wiring wiring(body);
    const auto got = run_blocking(wiring.sqs.receive("http://q/1/src", 10, 1s));
    ASSERT_FALSE(got) << body;
    EXPECT_TRUE(got.error().ambiguous) << body;
    EXPECT_TRUE(got.error().retryable()) << body;
  }
  Wiring no_id(R"({"MessageId":5})");
  const auto sent = run_blocking(no_id.sqs.send("http://q/1/dlq", {.body = "b"}));
  ASSERT_FALSE(sent);
  EXPECT_EQ(sent.error().code, "MalformedReply");
  EXPECT_TRUE(sent.error().ambiguous);
}

}  // namespace
}  // namespace ic::sqs
