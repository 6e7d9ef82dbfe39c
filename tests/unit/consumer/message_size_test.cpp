// SQS's size accounting and the packing of batches by count and bytes.
#include "consumer/message_size.hpp"

#include <gtest/gtest.h>

#include "consumer/dead_letter.hpp"

namespace ic::consumer {
namespace {

using Runs = std::vector<std::pair<std::size_t, std::size_t>>;

TEST(MessageSize, CountsTheBodyAndEachAttributesNameTypeAndValueInUtf8Bytes) {
  EXPECT_EQ(message_size("abc", {}), 3u);
  EXPECT_EQ(message_size("\u20ac", {}), 3u) << "one character, three UTF-8 bytes";
  const MessageAttributes attributes{{"failureReason", {"String", "INVALID_MESSAGE"}},
                                     {"n\u00e9", {"Number", "12"}}};
  // 13 + 6 + 15, then 3 (n, é in two bytes) + 6 + 2
  EXPECT_EQ(message_size("abc", attributes), 3u + 34u + 11u);
}

TEST(MessageSize, ABinaryValueCountsTheBytesItsBase64StandsFor) {
  EXPECT_EQ(attribute_size("b", {"Binary", "AAEC"}), 1u + 6u + 3u);
  EXPECT_EQ(attribute_size("b", {"Binary", "AAE="}), 1u + 6u + 2u);
  EXPECT_EQ(attribute_size("b", {"Binary", "AA=="}), 1u + 6u + 1u);
  EXPECT_EQ(attribute_size("b", {"Binary.gz", "AAE"}), 1u + 9u + 2u) << "unpadded";
  EXPECT_EQ(attribute_size("b", {"Binary", ""}), 1u + 6u);
}

// The case of issue 23: a body of exactly the limit has no room for any attribute of ours.
TEST(MessageSize, ABodyOfExactlyTheLimitLeavesNoRoomForTheReason) {
  const std::string body(kDefaultMessageSize, 'x');
  EXPECT_EQ(message_size(body, {}), kDefaultMessageSize);
  const MessageAttributes reason{{std::string(kFailureReasonAttribute), {"String", "INVALID"}}};
  EXPECT_GT(message_size(body, reason), kDefaultMessageSize);
}

TEST(PackBatches, BoundsEachBatchByCountAndByTotalBytes) {
  const std::vector<std::size_t> small(23, 10);
  EXPECT_EQ(pack_batches(small, 10, 1000), (Runs{{0, 10}, {10, 20}, {20, 23}}));
  // 100 KiB lines on a 256 KiB queue: two per batch, never three.
  const std::vector<std::size_t> large(5, 100 * 1024);
  EXPECT_EQ(pack_batches(large, 10, kDefaultMessageSize), (Runs{{0, 2}, {2, 4}, {4, 5}}));
  const std::vector<std::size_t> exact{kDefaultMessageSize, 1, kDefaultMessageSize - 1};
  EXPECT_EQ(pack_batches(exact, 10, kDefaultMessageSize), (Runs{{0, 1}, {1, 3}}))
      << "a batch may reach the limit exactly";
}

TEST(PackBatches, AnItemOverTheLimitIsARunOfItsOwnAndNothingIsEmpty) {
  const std::vector<std::size_t> sizes{5, 2000, 5};
  EXPECT_EQ(pack_batches(sizes, 10, 1000), (Runs{{0, 1}, {1, 2}, {2, 3}}));
  EXPECT_TRUE(pack_batches({}, 10, 1000).empty());
}

}  // namespace
}  // namespace ic::consumer
