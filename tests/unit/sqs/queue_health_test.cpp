// Decoding what GetQueueAttributes says about depth and the redrive settings: whatever is
// missing or malformed is left absent, never guessed and never thrown.
#include "adapters/sqs/queue_health.hpp"

#include <gtest/gtest.h>

namespace ic::sqs {
namespace {

using namespace std::chrono_literals;

TEST(DecodeQueueHealth, ReadsTheDepthTheVisibilityTimeoutAndTheMaxReceiveCount) {
  const auto health = decode_queue_health(
      {{"ApproximateNumberOfMessages", "12"},
       {"ApproximateNumberOfMessagesNotVisible", "3"},
       {"ApproximateNumberOfMessagesDelayed", "0"},
       {"VisibilityTimeout", "60"},
       {"RedrivePolicy",
        R"({"deadLetterTargetArn":"arn:aws:sqs:us-east-1:1:dlq","maxReceiveCount":"10"})"}});
  EXPECT_EQ(health.depth.visible, 12u);
  EXPECT_EQ(health.depth.in_flight, 3u);
  EXPECT_EQ(health.depth.delayed, 0u);
  EXPECT_EQ(health.settings.visibility_timeout, 60s);
  EXPECT_TRUE(health.settings.has_redrive_policy);
  EXPECT_EQ(health.settings.max_receive_count, 10);
}

TEST(DecodeQueueHealth, AcceptsTheCountAsANumberAsEmulatorsWriteIt) {
  const auto health = decode_queue_health({{"RedrivePolicy", R"({"maxReceiveCount":2})"}});
  EXPECT_EQ(health.settings.max_receive_count, 2);
}

TEST(DecodeQueueHealth, LeavesAbsentWhatIsMissingOrMalformed) {
  const auto health = decode_queue_health({{"ApproximateNumberOfMessages", "-1"},
                                           {"ApproximateNumberOfMessagesNotVisible", "3x"},
                                           {"VisibilityTimeout", ""},
                                           {"RedrivePolicy", "[1,2]"}});
  EXPECT_FALSE(health.depth.visible);
  EXPECT_FALSE(health.depth.in_flight);
  EXPECT_FALSE(health.depth.delayed);
  EXPECT_FALSE(health.settings.visibility_timeout);
  EXPECT_TRUE(health.settings.has_redrive_policy);
  EXPECT_FALSE(health.settings.max_receive_count);
  for (const char* policy : {"not json", R"({"maxReceiveCount":true})",
                             R"({"maxReceiveCount":"1e3"})", R"({"other":1})"}) {
    EXPECT_FALSE(decode_queue_health({{"RedrivePolicy", policy}}).settings.max_receive_count)
        << policy;
  }
  EXPECT_FALSE(decode_queue_health({}).settings.has_redrive_policy);
}

}  // namespace
}  // namespace ic::sqs
