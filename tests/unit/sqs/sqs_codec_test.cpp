// The SQS JSON 1.0 codec without a network: request shapes, entry ids by position, and every
// kind of per-entry answer (success, sender fault, service fault, throttling, unmentioned).
#include "adapters/sqs/sqs_codec.hpp"

#include <gtest/gtest.h>

namespace ic::sqs {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

TEST(SqsCodec, ReceiveAsksForReceiveCountSentTimestampAndAllMessageAttributes) {
  const auto request = encode_receive("https://q/1/charge-due", 7, 20s);
  EXPECT_EQ(request["QueueUrl"], "https://q/1/charge-due");
  EXPECT_EQ(request["MaxNumberOfMessages"], 7);
  EXPECT_EQ(request["WaitTimeSeconds"], 20);
  const json system = json::array({"ApproximateReceiveCount", "SentTimestamp", "AWSTraceHeader"});
  EXPECT_EQ(request["MessageSystemAttributeNames"], system);
  // A member outside the QueueAttributeName enum makes the request invalid for AWS's model.
  EXPECT_EQ(request["AttributeNames"], json::array({"All"}));
  EXPECT_EQ(request["MessageAttributeNames"], json::array({"All"}));
}

TEST(SqsCodec, DecodesReceivedMessages) {
  const auto reply = json::parse(R"({"Messages":[
    {"MessageId":"m1","ReceiptHandle":"rh1","MD5OfBody":"x","Body":"{\"a\":1}",
     "Attributes":{"ApproximateReceiveCount":"3","SentTimestamp":"1764460800123"},
     "MessageAttributes":{"trace":{"DataType":"String","StringValue":"t-1"},
                          "blob":{"DataType":"Binary","BinaryValue":"AAE="},
                          "n":{"DataType":"Number","StringValue":"42"}}}]})");
  auto messages = decode_receive(reply);
  ASSERT_TRUE(messages);
  ASSERT_EQ(messages->size(), 1u);
  const auto& m = messages->front();
  EXPECT_EQ(m.message_id, "m1");
  EXPECT_EQ(m.receipt_handle, "rh1");
  EXPECT_EQ(m.body, R"({"a":1})");
  EXPECT_EQ(m.receive_count, 3);
  EXPECT_EQ(m.sent_at.time_since_epoch(), 1764460800123ms);
  EXPECT_EQ(m.attributes.at("SentTimestamp"), "1764460800123");
  EXPECT_EQ(m.message_attributes.at("trace"), (consumer::MessageAttribute{"String", "t-1"}));
  EXPECT_EQ(m.message_attributes.at("blob"), (consumer::MessageAttribute{"Binary", "AAE="}));
  EXPECT_EQ(m.message_attributes.at("n"), (consumer::MessageAttribute{"Number", "42"}));
}

TEST(SqsCodec, AnEmptyLongPollIsNoMessagesAndAGarbledOneIsAnError) {
  auto empty = decode_receive(json::object());
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  EXPECT_FALSE(decode_receive(json{{"Messages", "nope"}}));
  EXPECT_FALSE(decode_receive(json::parse(R"({"Messages":[{"Body":"no id"}]})")));
  EXPECT_FALSE(decode_receive(json::parse(
      R"({"Messages":[{"MessageId":"m","ReceiptHandle":"r","MessageAttributes":3}]})")));
}

TEST(SqsCodec, BatchEntryIdsArePositionsNeverMessageIds) {
  const std::vector<consumer::DeleteEntry> entries{{"same", "rh-a"}, {"same", "rh-b"}};
  const auto request = encode_delete_batch("u", entries);
  ASSERT_EQ(request["Entries"].size(), 2u);
  EXPECT_EQ(request["Entries"][0], (json{{"Id", "0"}, {"ReceiptHandle", "rh-a"}}));
  EXPECT_EQ(request["Entries"][1], (json{{"Id", "1"}, {"ReceiptHandle", "rh-b"}}));

  const std::vector<consumer::VisibilityEntry> visibility{{"m", "rh", 30s}};
  EXPECT_EQ(encode_visibility_batch("u", visibility)["Entries"][0],
            (json{{"Id", "0"}, {"ReceiptHandle", "rh"}, {"VisibilityTimeout", 30}}));
}

TEST(SqsCodec, BatchResultAnswersEveryPosition) {
  const auto reply = json::parse(R"({
    "Successful":[{"Id":"0"},{"Id":"3"}],
    "Failed":[{"Id":"1","SenderFault":true,"Code":"ReceiptHandleIsInvalid","Message":"bad"},
              {"Id":"2","SenderFault":false,"Code":"InternalError"},
              {"Id":"4","SenderFault":"false","Code":"RequestThrottled"},
              {"Id":"99","SenderFault":true,"Code":"Ignored"},
              {"Id":"x","SenderFault":true,"Code":"Ignored"}]})");
  const auto result = decode_batch_result(reply, 6);
  ASSERT_EQ(result.size(), 6u);
  EXPECT_TRUE(result[0]);
  ASSERT_FALSE(result[1]);
  EXPECT_EQ(result[1].error().code, "ReceiptHandleIsInvalid");
  EXPECT_EQ(result[1].error().error_class, ErrorClass::Permanent);
  EXPECT_EQ(result[1].error().message, "bad");
  ASSERT_FALSE(result[2]);
  EXPECT_EQ(result[2].error().error_class, ErrorClass::Retryable);
  EXPECT_TRUE(result[3]);
  ASSERT_FALSE(result[4]);
  EXPECT_EQ(result[4].error().error_class, ErrorClass::Throttling);
  ASSERT_FALSE(result[5]) << "a position the reply never mentions is not success";
  EXPECT_EQ(result[5].error().code, "MissingBatchEntry");
  EXPECT_TRUE(result[5].error().retryable());
}

TEST(SqsCodec, SenderFaultAsStringIsUnderstood) {
  EXPECT_EQ(entry_error(json{{"SenderFault", "true"}, {"Code", "X"}}).error_class,
            ErrorClass::Permanent);
  EXPECT_EQ(entry_error(json{{"Code", "InternalError"}}).error_class, ErrorClass::Retryable);
}

TEST(SqsCodec, SendCarriesAttributesAndDelay) {
  const auto request = encode_send(
      "u", {.body = "b",
            .attributes = {{"failureReason", {"String", "X"}}, {"bin", {"Binary", "AAE="}}},
            .delay = 5s});
  EXPECT_EQ(request["MessageBody"], "b");
  EXPECT_EQ(request["DelaySeconds"], 5);
  EXPECT_EQ(request["MessageAttributes"]["failureReason"],
            (json{{"DataType", "String"}, {"StringValue", "X"}}));
  EXPECT_EQ(request["MessageAttributes"]["bin"],
            (json{{"DataType", "Binary"}, {"BinaryValue", "AAE="}}));
  EXPECT_FALSE(encode_send("u", {.body = "plain"}).contains("MessageAttributes"));
  EXPECT_FALSE(encode_send("u", {.body = "plain"}).contains("DelaySeconds"));
}

TEST(SqsCodec, SendBatchReturnsMessageIdsByPosition) {
  const std::vector<OutgoingMessage> messages{{.body = "a"}, {.body = "b"}};
  const auto request = encode_send_batch("u", messages);
  EXPECT_EQ(request["Entries"][1]["Id"], "1");
  EXPECT_EQ(request["Entries"][1]["MessageBody"], "b");
  const auto result =
      decode_send_batch(json::parse(R"({"Successful":[{"Id":"1","MessageId":"mid-b"}],
                      "Failed":[{"Id":"0","SenderFault":true,"Code":"InvalidMessageContents"}]})"),
                        2);
  ASSERT_EQ(result.size(), 2u);
  ASSERT_FALSE(result[0]);
  EXPECT_EQ(result[0].error().code, "InvalidMessageContents");
  ASSERT_TRUE(result[1]);
  EXPECT_EQ(*result[1], "mid-b");
}

TEST(SqsCodec, AdminShapes) {
  EXPECT_EQ(encode_create_queue("q", {}), (json{{"QueueName", "q"}}));
  EXPECT_EQ(encode_create_queue("q", {{"VisibilityTimeout", "60"}})["Attributes"],
            (json{{"VisibilityTimeout", "60"}}));
  EXPECT_EQ(*decode_queue_url(json{{"QueueUrl", "http://x/q"}}), "http://x/q");
  EXPECT_FALSE(decode_queue_url(json::object()));
  EXPECT_EQ(decode_queue_attributes(json::parse(R"({"Attributes":{"QueueArn":"arn:q"}})"))
                ->at("QueueArn"),
            "arn:q");
  EXPECT_EQ(
      json::parse(redrive_policy("arn:aws:sqs:us-east-1:1:dlq", 10)),
      (json{{"deadLetterTargetArn", "arn:aws:sqs:us-east-1:1:dlq"}, {"maxReceiveCount", "10"}}));
  EXPECT_EQ(*decode_message_id(json{{"MessageId", "m"}}), "m");
  EXPECT_FALSE(decode_message_id(json::object()));
}

}  // namespace
}  // namespace ic::sqs
