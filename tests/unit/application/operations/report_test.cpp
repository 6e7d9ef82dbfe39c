// The one time format the operator commands print (issue 24: status printed epoch milliseconds
// while list and reopen printed ISO-8601).
#include "application/operations/report.hpp"

#include <gtest/gtest.h>

namespace ic::application {
namespace {

TEST(ReportTest, TimesAreIsoUtcWithMilliseconds) {
  EXPECT_EQ(iso(Instant{Millis{1'764'460'800'123}}), "2025-11-30T00:00:00.123Z");
  EXPECT_EQ(iso(Instant{Millis{1'796'172'724'571}}), "2026-12-02T00:52:04.571Z");
  EXPECT_EQ(iso(Instant{Millis{0}}), "1970-01-01T00:00:00.000Z") << "a released lease";
}

}  // namespace
}  // namespace ic::application
