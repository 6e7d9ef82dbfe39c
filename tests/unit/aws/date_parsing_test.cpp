// The two dates the AWS plumbing reads from outside: a credentials document's Expiration
// (ISO-8601) and a reply's Date header (RFC 1123, used to learn clock skew). A date that
// system_clock cannot hold (about 1678 to 2261) is refused, never converted with overflow.
#include <gtest/gtest.h>

#include "aws/credentials/credentials_http.hpp"
#include "aws/json_client.hpp"
#include "aws/protocol/error_mapping.hpp"
#include "event/run_blocking.hpp"
#include "testing/no_sleep.hpp"
#include "testing/scripted_transport.hpp"
#include "testing/static_credentials.hpp"

namespace ic::aws {
namespace {

using namespace std::chrono;
using credentials_http::parse_iso8601;

TEST(Iso8601, ParsesUtcFractionsAndOffsets) {
  EXPECT_EQ(parse_iso8601("2026-11-30T06:00:00Z"), sys_days{2026y / November / 30} + 6h);
  EXPECT_EQ(parse_iso8601("2026-11-30T06:00:00.123+05:30"),
            sys_days{2026y / November / 30} + 30min);
}

TEST(Iso8601, RefusesYearsSystemClockCannotHold) {
  EXPECT_FALSE(parse_iso8601("9999-12-31T23:59:59Z"));
  EXPECT_FALSE(parse_iso8601("2262-04-12T00:00:00Z"));
  EXPECT_FALSE(parse_iso8601("1600-01-01T00:00:00Z"));
  EXPECT_FALSE(parse_iso8601("0001-01-01T00:00:00Z"));
  EXPECT_FALSE(parse_iso8601("-001-01-01T00:00:00Z"));
  EXPECT_TRUE(parse_iso8601("2261-12-31T23:59:59Z"));
  EXPECT_TRUE(parse_iso8601("1678-01-01T00:00:00Z"));
}

TEST(Iso8601, RefusesNegativeFieldsAndOffsets) {
  EXPECT_FALSE(parse_iso8601("2026-11-30T-1:00:00Z"));
  EXPECT_FALSE(parse_iso8601("2026-11-30T06:-1:00Z"));
  EXPECT_FALSE(parse_iso8601("2026-11-30T06:00:00+-1:00"));
  EXPECT_FALSE(parse_iso8601("2026-11-30T06:00:00+24:00"));
}

TEST(HttpDate, RefusesYearsSystemClockCannotHoldAndNegativeFields) {
  EXPECT_FALSE(parse_http_date("Fri, 31 Dec 9999 23:59:59 GMT"));
  EXPECT_FALSE(parse_http_date("Sat, 01 Jan 0000 00:00:00 GMT"));
  EXPECT_FALSE(parse_http_date("Sun, -6 Nov 1994 08:49:37 GMT"));
  EXPECT_FALSE(parse_http_date("Sun, 06 Nov 1994 -8:49:37 GMT"));
  EXPECT_TRUE(parse_http_date("Wed, 31 Dec 2261 23:59:59 GMT"));
}

// A skew error whose Date header says year 9999 must leave the signing clock alone.
TEST(HttpDate, AnUnrepresentableDateHeaderTeachesNoSkew) {
  testing::ScriptedTransport transport(
      {http::HttpResponse{.status = 400,
                          .headers = {{"date", "Fri, 31 Dec 9999 23:59:59 GMT"}},
                          .body = R"({"__type":"InvalidSignatureException",)"
                                  R"("message":"Signature expired: 20260101T000007Z"})"},
       http::HttpResponse{.status = 200, .body = "{}"}});
  testing::StaticCredentials credentials{"AKID", "s"};
  testing::NoSleep no_sleep;
  RetryPolicy retry{RetryConfig{}};
  JsonClient client({.service = "dynamodb",
                     .signing_name = "dynamodb",
                     .target_prefix = "DynamoDB_20120810",
                     .endpoint = "http://127.0.0.1:1",
                     .region = "us-east-1"},
                    transport, credentials, retry, {.sleeper = no_sleep});
  EXPECT_TRUE(event::run_blocking(client.call("GetItem", {})));
  EXPECT_EQ(client.clock_skew(), 0ms);
}

}  // namespace
}  // namespace ic::aws
