// The DLQ message attributes: ours always present and winning, originals kept within the limit.
#include "consumer/dead_letter.hpp"

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace ic::consumer
