// Error replies and transport failures become classified AwsErrors in one place.
#include "aws/protocol/error_mapping.hpp"

#include <gtest/gtest.h>

namespace ic::aws {
namespace {

http::HttpResponse reply(long status, std::string body, http::Headers headers = {}) {
  return http::HttpResponse{
      .status = status, .headers = std::move(headers), .body = std::move(body)};
}

TEST(ErrorMapping, TypeFromJsonBodyAfterTheHash) {
  const auto error = map_http_error(
      reply(400, R"({"__type":"com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException",)"
                 R"("message":"The conditional request failed","Item":{"pk":{"S":"k"}}})"));
  EXPECT_EQ(error.code, "ConditionalCheckFailedException");
  EXPECT_EQ(error.message, "The conditional request failed");
  EXPECT_EQ(error.error_class, ErrorClass::Permanent);
  EXPECT_EQ(error.http_status, 400);
  EXPECT_FALSE(error.ambiguous);
  EXPECT_NE(error.response_body.find("\"Item\""), std::string::npos);
}

TEST(ErrorMapping, HeaderWinsOverBodyAndLosesItsSuffix) {
  const auto error = map_http_error(
      reply(400, R"({"__type":"com.amazon.coral.validate#ValidationException","Message":"m"})",
            {{"x-amzn-errortype", "ThrottlingException:http://internal.amazon.com/coral/"}}));
  EXPECT_EQ(error.code, "ThrottlingException");
  EXPECT_EQ(error.message, "m");
  EXPECT_EQ(error.error_class, ErrorClass::Throttling);
}

TEST(ErrorMapping, BareTypeHandlesEveryForm) {
  EXPECT_EQ(bare_error_type("a.b#C"), "C");
  EXPECT_EQ(bare_error_type("C:http://x/y#z"), "C");
  EXPECT_EQ(bare_error_type("aws.sqs#QueueDoesNotExist:Sender"), "QueueDoesNotExist");
  EXPECT_EQ(bare_error_type("Plain"), "Plain");
}

TEST(ErrorMapping, ServerErrorsAreRetryableAndAmbiguous) {
  const auto error = map_http_error(reply(
      500, R"({"__type":"com.amazonaws.dynamodb.v20120810#InternalServerError","message":"x"})"));
  EXPECT_EQ(error.error_class, ErrorClass::Retryable);
  EXPECT_TRUE(error.ambiguous);
}

TEST(ErrorMapping, NonJsonBodyFallsBackToTheStatus) {
  const auto error = map_http_error(reply(503, "<html>busy</html>"));
  EXPECT_EQ(error.code, "Http503");
  EXPECT_EQ(error.error_class, ErrorClass::Retryable);
  EXPECT_EQ(map_http_error(reply(429, "")).error_class, ErrorClass::Throttling);
  EXPECT_EQ(map_http_error(reply(403, "")).error_class, ErrorClass::Permanent);
}

TEST(ErrorMapping, XmlErrorDocumentsAreUnderstoodToo) {
  const auto error =
      map_http_error(reply(403, R"(<?xml version="1.0"?><ErrorResponse><Errors><Error>)"
                                R"(<Code>SignatureDoesNotMatch</Code><Message>bad sig</Message>)"
                                R"(</Error></Errors></ErrorResponse>)"));
  EXPECT_EQ(error.code, "SignatureDoesNotMatch");
  EXPECT_EQ(error.message, "bad sig");
  EXPECT_EQ(error.error_class, ErrorClass::Permanent);
}

TEST(ErrorMapping, ClassifiesCodesBeforeStatuses) {
  EXPECT_EQ(classify_error("ProvisionedThroughputExceededException", 400), ErrorClass::Throttling);
  EXPECT_EQ(classify_error("RequestTimeoutException", 400), ErrorClass::Retryable);
  EXPECT_EQ(classify_error("ValidationException", 400), ErrorClass::Permanent);
  EXPECT_EQ(classify_error("UnknownOperationException", 501), ErrorClass::Permanent);
  EXPECT_EQ(classify_error("Anything", 502), ErrorClass::Retryable);
}

TEST(ErrorMapping, SignatureMismatchIsPermanentButExpiredSignatureIsClockSkew) {
  const auto mismatch = map_http_error(
      reply(400, R"({"__type":"com.amazon.coral.service#InvalidSignatureException",)"
                 R"("message":"The request signature we calculated does not match"})"));
  EXPECT_EQ(mismatch.error_class, ErrorClass::Permanent);
  EXPECT_FALSE(is_clock_skew_error(mismatch));

  const auto expired = map_http_error(
      reply(400, R"({"__type":"com.amazon.coral.service#InvalidSignatureException",)"
                 R"("message":"Signature expired: 20260101T000000Z is now earlier than ..."})"));
  EXPECT_TRUE(is_clock_skew_error(expired));
  EXPECT_EQ(expired.error_class, ErrorClass::Retryable);

  for (auto code : {"RequestTimeTooSkewed", "RequestExpired", "RequestInTheFuture"}) {
    EXPECT_TRUE(is_clock_skew_error(Error{.code = code})) << code;
  }
}

TEST(ErrorMapping, TransportFailuresAreRetryableAndAmbiguousOnlyAfterSending) {
  const auto refused = map_transport_error({.failure = http::TransportFailure::CouldNotConnect});
  EXPECT_EQ(refused.code, "CouldNotConnect");
  EXPECT_EQ(refused.error_class, ErrorClass::Retryable);
  EXPECT_FALSE(refused.ambiguous);
  EXPECT_FALSE(
      map_transport_error({.failure = http::TransportFailure::TimeoutBeforeSend}).ambiguous);
  const auto late = map_transport_error({.failure = http::TransportFailure::TimeoutAfterSend});
  EXPECT_EQ(late.code, "TimeoutAfterSend");
  EXPECT_TRUE(late.ambiguous);
  EXPECT_TRUE(map_transport_error({.failure = http::TransportFailure::Interrupted}).ambiguous);
}

TEST(ErrorMapping, ParsesHttpDates) {
  using namespace std::chrono;
  const auto parsed = parse_http_date("Sun, 06 Nov 1994 08:49:37 GMT");
  ASSERT_TRUE(parsed);
  EXPECT_EQ(*parsed, sys_days{1994y / November / 6} + 8h + 49min + 37s);
  EXPECT_FALSE(parse_http_date("Sun, 06 Xyz 1994 08:49:37 GMT"));
  EXPECT_FALSE(parse_http_date("Sun, 31 Feb 1994 08:49:37 GMT"));
  EXPECT_FALSE(parse_http_date("1994-11-06T08:49:37Z"));
}

}  // namespace
}  // namespace ic::aws
