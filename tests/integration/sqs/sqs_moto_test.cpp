// The SQS client against moto: the JSON 1.0 protocol round trip, DLQ with attributes and
// redrive policy, per-entry batch failures, and the container over real SQS.
#include <gtest/gtest.h>

#include <atomic>

#include "adapters/sqs/sqs_client.hpp"
#include "consumer/listener_container.hpp"
#include "event/run_blocking.hpp"
#include "http/curl_transport.hpp"
#include "testing/backend_fixture.hpp"
#include "testing/fault_injecting_queue.hpp"
#include "testing/listener_support.hpp"
#include "testing/static_credentials.hpp"

namespace ic::sqs {
namespace {

using namespace std::chrono_literals;
using consumer::DeleteEntry;
using consumer::ListenerContainer;
using consumer::Message;
using consumer::MessageAttribute;
using consumer::MessageAttributes;
using consumer::VisibilityEntry;
using event::run_blocking;
using testing::eventually;
using testing::FaultInjectingQueue;
using testing::RecordingObserver;
using testing::Running;
using testing::shared_backend;
using testing::StaticCredentials;

class SqsAgainstMoto : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(shared_backend().reset()); }

  std::string create(std::string_view name, QueueAttributes attributes = {}) {
    auto url = run_blocking(sqs.create_queue(name, attributes));
    EXPECT_TRUE(url) << (url ? "" : url.error().code);
    return url ? *url : std::string{};
  }

  std::vector<Message> receive_all(const std::string& url, std::size_t expected) {
    std::vector<Message> out;
    for (int i = 0; i < 10 && out.size() < expected; ++i) {
      auto got = run_blocking(sqs.receive(url, 10, 1s));
      EXPECT_TRUE(got) << (got ? "" : got.error().code);
      if (got) out.insert(out.end(), got->begin(), got->end());
    }
    return out;
  }

  http::CurlTransport curl;
  StaticCredentials credentials{"AKIDTEST", "secret"};
  aws::RetryPolicy retry{aws::RetryConfig{.transient_base = 5ms, .throttling_base = 5ms}};
  aws::JsonClient client{{.service = "sqs",
                          .signing_name = "sqs",
                          .target_prefix = std::string(kSqsTargetPrefix),
                          .endpoint = shared_backend().endpoint(),
                          .region = "us-east-1",
                          .timeouts = {.connect = 2000ms, .total = 30000ms}},
                         curl,
                         credentials,
                         retry};
  SqsClient sqs{client};
};

TEST_F(SqsAgainstMoto, SendReceiveChangeVisibilityDeleteRoundTrip) {
  const auto url = create("round-trip", {{"VisibilityTimeout", "30"}});
  auto id = run_blocking(
      sqs.send(url, {.body = R"({"chargeId":"CHG-1"})",
                     .attributes = {{"trace", {"String", "t-1"}}, {"n", {"Number", "7"}}}}));
  ASSERT_TRUE(id);

  auto first = receive_all(url, 1);
  ASSERT_EQ(first.size(), 1u);
  EXPECT_EQ(first[0].message_id, *id);
  EXPECT_EQ(first[0].body, R"({"chargeId":"CHG-1"})");
  EXPECT_EQ(first[0].receive_count, 1);
  EXPECT_GT(first[0].sent_at.time_since_epoch().count(), 0);
  EXPECT_EQ(first[0].message_attributes.at("trace"), (MessageAttribute{"String", "t-1"}));
  EXPECT_EQ(first[0].message_attributes.at("n"), (MessageAttribute{"Number", "7"}));

  // Invisible for 30 s; visibility 0 hands it back at once, as a second delivery.
  const std::vector<VisibilityEntry> back{{first[0].message_id, first[0].receipt_handle, 0s}};
  auto changed = run_blocking(sqs.change_visibility_batch(url, back));
  ASSERT_TRUE(changed);
  ASSERT_EQ(changed->size(), 1u);
  EXPECT_TRUE(changed->front());
  auto second = receive_all(url, 1);
  ASSERT_EQ(second.size(), 1u);
  EXPECT_EQ(second[0].receive_count, 2);

  const std::vector<DeleteEntry> remove{{second[0].message_id, second[0].receipt_handle}};
  auto deleted = run_blocking(sqs.delete_batch(url, remove));
  ASSERT_TRUE(deleted);
  EXPECT_TRUE(deleted->front());
  auto after = run_blocking(sqs.receive(url, 10, 1s));
  ASSERT_TRUE(after);
  EXPECT_TRUE(after->empty());
  auto attributes = run_blocking(sqs.get_queue_attributes(url, {"ApproximateNumberOfMessages"}));
  ASSERT_TRUE(attributes);
  EXPECT_EQ(attributes->at("ApproximateNumberOfMessages"), "0");
}

TEST_F(SqsAgainstMoto, DeadLetterKeepsBodyAndCarriesAttributes) {
  const auto source = create("charge-due");
  const auto dlq = create("charge-due-dlq");
  auto arn = run_blocking(sqs.get_queue_attributes(dlq, {"QueueArn"}));
  ASSERT_TRUE(arn);
  const auto policy = redrive_policy(arn->at("QueueArn"), 10);
  ASSERT_TRUE(run_blocking(sqs.set_queue_attributes(source, {{"RedrivePolicy", policy}})));
  auto read_back = run_blocking(sqs.get_queue_attributes(source));
  ASSERT_TRUE(read_back);
  EXPECT_EQ(nlohmann::json::parse(read_back->at("RedrivePolicy"))["deadLetterTargetArn"],
            arn->at("QueueArn"));

  SqsQueue queue(sqs, source, dlq);
  const std::string body = "{ \"chargeId\" : \"CHG-7\" }\n";
  const MessageAttributes attributes{{"failureReason", {"String", "PAYLOAD_MISMATCH"}},
                                     {"failureDetail", {"String", "hash differs"}},
                                     {"chargeId", {"String", "CHG-7"}},
                                     {"sourceMessageId", {"String", "m-1"}}};
  ASSERT_TRUE(run_blocking(queue.send_to_dlq(body, attributes)));
  auto forwarded = receive_all(dlq, 1);
  ASSERT_EQ(forwarded.size(), 1u);
  EXPECT_EQ(forwarded[0].body, body);
  EXPECT_EQ(forwarded[0].message_attributes, attributes);
}

TEST_F(SqsAgainstMoto, EveryFailedBatchEntryIsReportedAtItsPosition) {
  const auto url = create("batch-failures");
  ASSERT_TRUE(run_blocking(sqs.send(url, {.body = "a"})));
  auto got = receive_all(url, 1);
  ASSERT_EQ(got.size(), 1u);

  const std::vector<VisibilityEntry> visibility{{"bogus", "not-a-receipt-handle", 5s},
                                                {got[0].message_id, got[0].receipt_handle, 5s}};
  auto changed = run_blocking(sqs.change_visibility_batch(url, visibility));
  ASSERT_TRUE(changed);
  ASSERT_EQ(changed->size(), 2u);
  ASSERT_FALSE((*changed)[0]);
  EXPECT_EQ((*changed)[0].error().error_class, ErrorClass::Permanent);
  EXPECT_TRUE((*changed)[1]);

  const std::vector<DeleteEntry> remove{{got[0].message_id, got[0].receipt_handle},
                                        {"bogus", "not-a-receipt-handle"}};
  auto deleted = run_blocking(sqs.delete_batch(url, remove));
  ASSERT_TRUE(deleted);
  ASSERT_EQ(deleted->size(), 2u);
  EXPECT_TRUE((*deleted)[0]);
  ASSERT_FALSE((*deleted)[1]);
  EXPECT_EQ((*deleted)[1].error().code, "ReceiptHandleIsInvalid");
  EXPECT_EQ((*deleted)[1].error().error_class, ErrorClass::Permanent);
}

TEST_F(SqsAgainstMoto, SendBatchGetQueueUrlAndPurge) {
  const auto url = create("admin");
  const std::vector<OutgoingMessage> messages{
      {.body = "one"}, {.body = "two", .attributes = {{"k", {"String", "v"}}}}, {.body = "three"}};
  auto sent = run_blocking(sqs.send_batch(url, messages));
  ASSERT_TRUE(sent);
  ASSERT_EQ(sent->size(), 3u);
  for (const auto& id : *sent) EXPECT_TRUE(id && !id->empty());

  auto found = run_blocking(sqs.get_queue_url("admin"));
  ASSERT_TRUE(found);
  EXPECT_EQ(*found, url);
  auto again = run_blocking(sqs.create_queue("admin"));
  ASSERT_TRUE(again) << "creating an existing queue with the same attributes is idempotent";
  EXPECT_EQ(*again, url);

  ASSERT_TRUE(run_blocking(sqs.purge_queue(url)));
  auto after = run_blocking(sqs.receive(url, 10, 0s));
  ASSERT_TRUE(after);
  EXPECT_TRUE(after->empty());

  auto missing = run_blocking(sqs.get_queue_url("no-such-queue"));
  ASSERT_FALSE(missing);
  EXPECT_EQ(missing.error().error_class, ErrorClass::Permanent);
  const auto& code = missing.error().code;
  EXPECT_TRUE(code == "QueueDoesNotExist" || code.find("NonExistentQueue") != std::string::npos)
      << missing.error().code;
}

TEST_F(SqsAgainstMoto, ContainerDrainsARealQueue) {
  const auto source = create("container", {{"VisibilityTimeout", "30"}});
  const auto dlq = create("container-dlq");
  for (int i = 0; i < 12; ++i)
    ASSERT_TRUE(run_blocking(sqs.send(source, {.body = std::to_string(i)})));
  SqsQueue queue(sqs, source, dlq);
  RecordingObserver observer;
  std::atomic<int> handled{0};
  event::EventLoop loop;
  ListenerContainer container(
      loop, queue,
      [&](const Message& message, consumer::LeaseHeartbeat&) -> Task<consumer::Disposition> {
        ++handled;
        if (message.body == "7") {
          co_return consumer::DeadLetter{
              .reason = "INVALID_MESSAGE", .detail = "seven", .key = "K-7"};
        }
        co_return consumer::Ack{};
      },
      {.max_in_flight = 4,
       .wait_time = 1s,
       .flush_interval = 50ms,
       .key_attribute = "chargeId",
       .seed = 1},
      &observer);
  {
    Running running(container);
    ASSERT_TRUE(eventually([&] { return observer.dispositions().size() >= 12; }, 60s));
  }
  EXPECT_EQ(handled.load(), 12);
  EXPECT_TRUE(observer.entry_failures().empty());
  auto left = run_blocking(sqs.receive(source, 10, 1s));
  ASSERT_TRUE(left);
  EXPECT_TRUE(left->empty()) << "every ack reached SQS before run() returned";
  auto dead = receive_all(dlq, 1);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].body, "7");
  EXPECT_EQ(dead[0].message_attributes.at("chargeId").value, "K-7");
  EXPECT_EQ(dead[0].message_attributes.at("failureReason").value, "INVALID_MESSAGE");
}

TEST_F(SqsAgainstMoto, AFailedDlqForwardKeepsTheMessageUntilTheDlqAnswers) {
  const auto source = create("keep", {{"VisibilityTimeout", "30"}});
  const auto dlq = create("keep-dlq");
  ASSERT_TRUE(run_blocking(sqs.send(source, {.body = "poison"})));
  SqsQueue real(sqs, source, dlq);
  FaultInjectingQueue queue(real);
  queue.fail_dlq_sends(1, {.error_class = ErrorClass::Retryable, .code = "ServiceUnavailable"});
  RecordingObserver observer;
  std::atomic<int> handled{0};
  event::EventLoop loop;
  ListenerContainer container(
      loop, queue,
      [&](const Message&, consumer::LeaseHeartbeat&) -> Task<consumer::Disposition> {
        ++handled;
        co_return consumer::DeadLetter{
            .reason = "INVALID_MESSAGE", .detail = "not JSON", .key = ""};
      },
      {.max_in_flight = 2,
       .wait_time = 1s,
       .flush_interval = 20ms,
       .retry_jitter_ratio = 0.0,
       .dlq_failure_retry = 1s,
       .seed = 1},
      &observer);
  {
    Running running(container);
    ASSERT_TRUE(eventually([&] { return observer.dispositions().size() >= 2; }, 60s));
  }
  EXPECT_EQ(handled.load(), 2) << "redelivered after the failed forward, forwarded once";
  EXPECT_EQ(observer.dlq_failures().size(), 1u);
  auto dead = receive_all(dlq, 1);
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0].body, "poison");
  auto left = run_blocking(sqs.receive(source, 10, 1s));
  ASSERT_TRUE(left);
  EXPECT_TRUE(left->empty());
}

}  // namespace
}  // namespace ic::sqs
