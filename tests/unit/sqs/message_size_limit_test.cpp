// The queue's MaximumMessageSize read once and kept, and SqsQueue refusing a DLQ copy too large
// for it without a round trip (SQS counts attributes; ElasticMQ does not).
#include "adapters/sqs/message_size_limit.hpp"

#include <gtest/gtest.h>

#include "event/run_blocking.hpp"
#include "testing/scripted_transport.hpp"
#include "testing/sqs_wiring.hpp"

namespace ic::sqs {
namespace {

using namespace std::chrono_literals;
using event::run_blocking;

constexpr std::string_view kLimit1K = R"({"Attributes":{"MaximumMessageSize":"1024"}})";

struct LimitWiring : testing::SqsWiring<testing::ScriptedTransport> {
  LimitWiring() : SqsWiring(10s) {}

  [[nodiscard]] std::vector<std::string> targets() const {
    std::vector<std::string> out;
    for (const auto& request : transport.requests()) out.push_back(testing::target_of(request));
    return out;
  }
};

TEST(ParseMaximumMessageSize, AcceptsSqsRangeOnly) {
  EXPECT_EQ(parse_maximum_message_size({{"MaximumMessageSize", "262144"}}), 262144u);
  EXPECT_EQ(parse_maximum_message_size({{"MaximumMessageSize", "1048576"}}), 1048576u);
  for (const char* bad : {"1023", "1048577", "", "12k", "-1"}) {
    auto parsed = parse_maximum_message_size({{"MaximumMessageSize", bad}});
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().error_class, ErrorClass::Permanent);
  }
  EXPECT_FALSE(parse_maximum_message_size({}));
}

TEST(MessageSizeLimit, ReadsTheAttributeOnceUntilForgotten) {
  LimitWiring wiring;
  wiring.transport.answer(200, std::string(kLimit1K));
  wiring.transport.answer(200, R"({"Attributes":{"MaximumMessageSize":"2048"}})");
  MessageSizeLimit limit(wiring.sqs, "http://q/1/dlq");
  EXPECT_EQ(run_blocking(limit.get()), 1024u);
  EXPECT_EQ(run_blocking(limit.get()), 1024u);
  EXPECT_EQ(wiring.transport.requests().size(), 1u);
  limit.forget();
  EXPECT_EQ(run_blocking(limit.get()), 2048u);
  EXPECT_EQ(wiring.targets(), (std::vector<std::string>{"AmazonSQS.GetQueueAttributes",
                                                        "AmazonSQS.GetQueueAttributes"}));
}

// ElasticMQ answers GetQueueAttributes without the attribute: asking on every dead letter would
// only fail again. A transient failure is not kept.
TEST(MessageSizeLimit, KeepsAPermanentFailureButNotATransientOne) {
  LimitWiring wiring;
  for (int attempt = 0; attempt < 3; ++attempt) {
    wiring.transport.fail(http::TransportFailure::CouldNotConnect);
  }
  wiring.transport.answer(200, R"({"Attributes":{}})");
  MessageSizeLimit limit(wiring.sqs, "http://q/1/dlq");
  auto transient = run_blocking(limit.get());
  ASSERT_FALSE(transient);
  EXPECT_TRUE(transient.error().retryable());
  auto missing = run_blocking(limit.get());
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().code, "MalformedReply");
  EXPECT_FALSE(run_blocking(limit.get()));
  EXPECT_EQ(wiring.transport.requests().size(), 4u) << "three attempts, then one read kept";
}

TEST(SqsQueue, RefusesADlqCopyOverTheDlqLimitWithoutSendingIt) {
  LimitWiring wiring;
  wiring.transport.answer(200, std::string(kLimit1K));
  wiring.transport.answer(200, R"({"MessageId":"m-1"})");
  SqsQueue queue(wiring.sqs, "http://q/1/src", "http://q/1/dlq");
  const consumer::MessageAttributes reason{{"failureReason", {"String", "INVALID_MESSAGE"}}};

  auto refused = run_blocking(queue.send_to_dlq(std::string(1024, 'x'), reason));
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().code, "MessageTooLarge");
  EXPECT_EQ(refused.error().error_class, ErrorClass::Permanent);
  EXPECT_NE(refused.error().message.find("1058 bytes"), std::string::npos)
      << refused.error().message;

  EXPECT_TRUE(run_blocking(queue.send_to_dlq(std::string(1024, 'x'), {})))
      << "the body alone fits exactly";
  EXPECT_EQ(wiring.targets(),
            (std::vector<std::string>{"AmazonSQS.GetQueueAttributes", "AmazonSQS.SendMessage"}));
}

TEST(SqsQueue, SendsUncheckedWhileTheLimitCannotBeRead) {
  LimitWiring wiring;
  wiring.transport.answer(400, R"({"__type":"com.amazon.coral.service#AccessDeniedException"})");
  wiring.transport.answer(200, R"({"MessageId":"m-1"})");
  SqsQueue queue(wiring.sqs, "http://q/1/src", "http://q/1/dlq");
  EXPECT_TRUE(run_blocking(queue.send_to_dlq(std::string(2000, 'x'), {})));
  EXPECT_EQ(wiring.targets(),
            (std::vector<std::string>{"AmazonSQS.GetQueueAttributes", "AmazonSQS.SendMessage"}));
}

}  // namespace
}  // namespace ic::sqs
