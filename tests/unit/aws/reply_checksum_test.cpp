// x-amz-crc32 verification: zlib's CRC-32 against the standard check value and the header's
// decimal form as DynamoDB writes it.
#include "aws/protocol/reply_checksum.hpp"

#include <gtest/gtest.h>

#include <optional>

namespace ic::aws {
namespace {

http::HttpResponse reply(std::string body, std::optional<std::string> crc) {
  http::HttpResponse response{.status = 200, .body = std::move(body)};
  if (crc) response.headers.emplace_back("x-amz-crc32", *crc);
  return response;
}

TEST(ReplyChecksum, Crc32IsZlibsCrc32) {
  EXPECT_EQ(crc32_of(""), 0u);
  EXPECT_EQ(crc32_of("123456789"), 0xCBF43926u);  // the CRC-32/ISO-HDLC check value
  EXPECT_EQ(crc32_of("{}"), 2745614147u);
}

TEST(ReplyChecksum, HeaderIsComparedAsDecimalUint32) {
  EXPECT_TRUE(reply_crc32_matches(reply("{}", "2745614147")));
  EXPECT_TRUE(reply_crc32_matches(reply("{}", std::nullopt)));
  EXPECT_FALSE(reply_crc32_matches(reply("{}", "2745614146")));
  EXPECT_FALSE(reply_crc32_matches(reply("{ }", "2745614147")));
  EXPECT_FALSE(reply_crc32_matches(reply("{}", "")));
  EXPECT_FALSE(reply_crc32_matches(reply("{}", "0xA3A6F943")));
  EXPECT_FALSE(reply_crc32_matches(reply("{}", "2745614147 ")));
  EXPECT_FALSE(reply_crc32_matches(reply("{}", "99999999999")));
}

TEST(ReplyChecksum, MismatchIsRetryableAmbiguousAndNamesBothValues) {
  const auto error = crc32_check_failed(reply("{}", "1"));
  EXPECT_EQ(error.code, "CRC32CheckFailed");
  EXPECT_EQ(error.error_class, ErrorClass::Retryable);
  EXPECT_TRUE(error.ambiguous);
  EXPECT_EQ(error.message, "x-amz-crc32 1 but the body's CRC-32 is 2745614147");
}

}  // namespace
}  // namespace ic::aws
