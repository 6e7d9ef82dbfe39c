#include "http/retry_after.hpp"

#include <gtest/gtest.h>

namespace ic::http {
namespace {

using namespace std::chrono_literals;

// 2025-11-30T00:00:00Z
constexpr Instant kNow{Millis{1'764'460'800'000}};

TEST(RetryAfter, DeltaSeconds) {
  EXPECT_EQ(parse_retry_after("6", kNow), 6000ms);
  EXPECT_EQ(parse_retry_after("0", kNow), 0ms);
  EXPECT_EQ(parse_retry_after(" 120\t", kNow), 120'000ms);
}

TEST(RetryAfter, DeltaSecondsAreCapped) {
  EXPECT_EQ(parse_retry_after("86400", kNow), kMaxRetryAfter);
  EXPECT_EQ(parse_retry_after("99999999999999999999999", kNow), kMaxRetryAfter);
}

TEST(RetryAfter, HttpDateIsTheTimeLeftUntilIt) {
  EXPECT_EQ(parse_retry_after("Sun, 30 Nov 2025 00:00:06 GMT", kNow), 6000ms);
  EXPECT_EQ(parse_retry_after("Sun, 30 Nov 2025 00:01:00 GMT", kNow), 60'000ms);
}

TEST(RetryAfter, AnHttpDateInThePastMeansNow) {
  EXPECT_EQ(parse_retry_after("Sat, 29 Nov 2025 23:59:00 GMT", kNow), 0ms);
}

TEST(RetryAfter, AFarHttpDateIsCapped) {
  EXPECT_EQ(parse_retry_after("Fri, 01 Jan 2100 00:00:00 GMT", kNow), kMaxRetryAfter);
}

TEST(RetryAfter, BadValuesAreIgnored) {
  for (const std::string_view bad :
       {"", "  ", "-5", "1.5", "6s", "+6", "soon", "Sun, 30 Nov 2025 00:00:06 UTC",
        "Sunday, 30-Nov-25 00:00:06 GMT", "Sun Nov 30 00:00:06 2025",
        "Sun, 31 Nov 2025 00:00:06 GMT", "Sun, 30 Nov 2025 24:00:06 GMT",
        "Sun, 30 Xyz 2025 00:00:06 GMT", "Sun, 3- Nov 2025 00:00:06 GMT",
        "Sun, 30 Nov 2025 00:00:6  GMT"}) {
    EXPECT_EQ(parse_retry_after(bad, kNow), std::nullopt) << "'" << bad << "'";
  }
}

TEST(ImfFixdate, ParsesTheRfcExample) {
  const auto at = parse_imf_fixdate("Sun, 06 Nov 1994 08:49:37 GMT");
  ASSERT_TRUE(at);
  EXPECT_EQ(at->time_since_epoch(), 784111777000ms);
}

}  // namespace
}  // namespace ic::http
