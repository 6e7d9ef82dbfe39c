// list --since: dates, instants and durations back from now; anything else is one clear error.
#include "app/time_arg.hpp"

#include <gtest/gtest.h>

namespace ic::app {
namespace {

using namespace std::chrono;

const Instant kNow = Instant{Millis{1'764'547'200'000}};  // 2025-12-01T00:00:00Z

TEST(TimeArgTest, DurationsCountBackFromNow) {
  EXPECT_EQ(parse_since("90m", kNow), kNow - minutes(90));
  EXPECT_EQ(parse_since("24h", kNow), kNow - hours(24));
  EXPECT_EQ(parse_since("7d", kNow), kNow - days(7));
}

TEST(TimeArgTest, DatesAreMidnightUtcAndInstantsAreExact) {
  EXPECT_EQ(parse_since("2026-11-30", kNow),
            Instant{time_point_cast<Millis>(sys_days(2026y / November / 30))});
  EXPECT_EQ(parse_since("2026-11-30T08:15:42Z", kNow),
            Instant{time_point_cast<Millis>(sys_days(2026y / November / 30))} + hours(8) +
                minutes(15) + seconds(42));
}

TEST(TimeArgTest, AnythingElseIsRefusedWithTheExpectedForms) {
  for (const char* bad : {"", "yesterday", "2026-02-30", "2026-11-30T25:00:00Z",
                          "2026-11-30 08:15:42", "-5h", "5w", "h", "2026-11-30T08:15:42+01:00"}) {
    auto parsed = parse_since(bad, kNow);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_NE(parsed.error().find("YYYY-MM-DD"), std::string::npos) << bad;
  }
}

}  // namespace
}  // namespace ic::app
