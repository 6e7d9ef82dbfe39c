// The DLQ message attributes: ours always present and winning, originals kept within the limit.
#include "consumer/dead_letter.hpp"

#include <gtest/gtest.h>

#include "core/text_escape.hpp"

namespace ic::consumer {
namespace {

TEST(DeadLetterAttributes, CarriesReasonDetailKeyAndSourceMessageId) {
  Message message{.message_id = "m-1", .body = "{}"};
  message.message_attributes = {{"failureReason", {"String", "spoofed"}},
                                {"traceparent", {"String", "00-1"}}};
  const auto out = dead_letter_attributes(
      message, {.reason = "PREVIOUSLY_FAILED", .detail = "FAILED earlier", .key = "CHG-9"},
      "chargeId");
  EXPECT_EQ(out.at("failureReason").value, "PREVIOUSLY_FAILED");
  EXPECT_EQ(out.at("failureDetail").value, "FAILED earlier");
  EXPECT_EQ(out.at("chargeId").value, "CHG-9");
  EXPECT_EQ(out.at("sourceMessageId").value, "m-1");
  EXPECT_EQ(out.at("traceparent").value, "00-1");
  EXPECT_EQ(out.size(), 5u);
}

TEST(DeadLetterAttributes, LeavesOutEmptyValuesAndStaysWithinTheSqsLimit) {
  Message message{.message_id = "m-2"};
  for (int i = 0; i < 12; ++i) {
    message.message_attributes.emplace("a" + std::to_string(i), MessageAttribute{"String", "v"});
  }
  const auto out = dead_letter_attributes(
      message, {.reason = "INVALID_MESSAGE", .detail = "", .key = ""}, "chargeId");
  EXPECT_FALSE(out.contains("failureDetail"));
  EXPECT_FALSE(out.contains("chargeId"));
  EXPECT_EQ(out.at("failureReason").value, "INVALID_MESSAGE");
  EXPECT_EQ(out.at("sourceMessageId").value, "m-2");
  EXPECT_EQ(out.size(), kMaxMessageAttributes);
}

// A 200 KB key echoed in the detail, with raw control characters: SQS would refuse both.
TEST(DeadLetterAttributes, BoundsAndEscapesOurValuesWhateverTheHandlerPutInThem) {
  Message message{.message_id = "m-3"};
  const std::string detail =
      "\x01\x1b[31m" + std::string(200'000, 'k') + ": must not be given more than once";
  const auto out = dead_letter_attributes(
      message, {.reason = "INVALID_MESSAGE", .detail = detail, .key = "K\x7f"}, "chargeId");
  const std::string& carried = out.at("failureDetail").value;
  EXPECT_TRUE(carried.starts_with("\\u0001\\u001b[31mkkk")) << carried.substr(0, 40);
  EXPECT_TRUE(carried.ends_with("kkk...")) << carried.substr(carried.size() - 10);
  EXPECT_EQ(carried.size(), kMaxDetailChars) << "ASCII: one byte per character";
  EXPECT_TRUE(xml_chars_only(carried));
  EXPECT_EQ(out.at("chargeId").value, "K\\u007f");
}

TEST(DeadLetterAttributes, SmallerCopiesLeaveOutTheProducersThenAllButTheReason) {
  Message message{.message_id = "m-4"};
  message.message_attributes = {{"traceparent", {"String", "00-1"}}};
  const DeadLetter decision{.reason = "PAYLOAD_MISMATCH", .detail = "differs", .key = "CHG-1"};
  const auto ours = dead_letter_attributes(message, decision, "chargeId", DeadLetterCopy::OursOnly);
  EXPECT_EQ(ours.size(), 4u);
  EXPECT_FALSE(ours.contains("traceparent"));
  EXPECT_EQ(dropped_producer_attributes(message, ours), std::vector<std::string>{"traceparent"});
  const auto least =
      dead_letter_attributes(message, decision, "chargeId", DeadLetterCopy::ReasonOnly);
  const MessageAttributes expected{{"failureReason", {"String", "PAYLOAD_MISMATCH"}},
                                   {"sourceMessageId", {"String", "m-4"}}};
  EXPECT_EQ(least, expected);
  EXPECT_TRUE(
      dead_letter_attributes(message, decision, "chargeId", DeadLetterCopy::BodyOnly).empty());
}

TEST(DeadLetterAttributes, AProducerAttributeOverriddenByOursCountsAsDropped) {
  Message message{.message_id = "m-5"};
  message.message_attributes = {{"failureReason", {"String", "spoofed"}},
                                {"traceparent", {"String", "00-1"}}};
  const auto out = dead_letter_attributes(
      message, {.reason = "PREVIOUSLY_FAILED", .detail = "", .key = ""}, "chargeId");
  EXPECT_EQ(dropped_producer_attributes(message, out), std::vector<std::string>{"failureReason"});
}

}  // namespace
}  // namespace ic::consumer
