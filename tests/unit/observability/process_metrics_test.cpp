// The process_* metrics: /proc's stat line read by field position (a command name may hold
// spaces and parentheses), rendered with the standard names and types, and served through a
// registry collector.
#include "observability/process_metrics.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "observability/metrics.hpp"

namespace ic::observability {
namespace {

using ::testing::HasSubstr;

// Fields 3..24 of proc(5) with utime 250, stime 150, starttime 1000, vsize 4096000, rss 300.
const std::string kStat =
    "4242 (charge (re)covery) S 1 4242 4242 0 -1 4194560 500 0 0 0 250 150 0 0 20 0 9 0 1000 "
    "4096000 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";

TEST(ProcessMetrics, ReadsTheStatLineByFieldPosition) {
  auto sample = parse_proc_stat(kStat, 100, 4096, 1'700'000'000);
  ASSERT_TRUE(sample);
  EXPECT_DOUBLE_EQ(sample->cpu_seconds, 4.0);
  EXPECT_DOUBLE_EQ(sample->virtual_bytes, 4096000);
  EXPECT_DOUBLE_EQ(sample->resident_bytes, 300.0 * 4096);
  EXPECT_DOUBLE_EQ(sample->start_time_seconds, 1'700'000'010);
  EXPECT_FALSE(parse_proc_stat("garbage", 100, 4096, 0));
  EXPECT_FALSE(parse_proc_stat("1 (x) S 1 2 3", 100, 4096, 0));
}

TEST(ProcessMetrics, ReadsTheBootTime) {
  EXPECT_EQ(parse_boot_time("cpu  1 2 3\nintr 5\nbtime 1700000000\nprocesses 9\n"), 1'700'000'000);
  EXPECT_FALSE(parse_boot_time("cpu 1\n"));
}

TEST(ProcessMetrics, RenderWithTheStandardNamesAndTypes) {
  const std::string text = render_process_metrics({.cpu_seconds = 1.5,
                                                   .resident_bytes = 2,
                                                   .virtual_bytes = 3,
                                                   .start_time_seconds = 4,
                                                   .open_fds = 5,
                                                   .max_fds = 1024});
  EXPECT_THAT(
      text, HasSubstr("# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total 1.5\n"));
  EXPECT_THAT(text, HasSubstr("# TYPE process_max_fds gauge\nprocess_max_fds 1024\n"));
  EXPECT_THAT(text, HasSubstr("process_open_fds 5\n"));
  EXPECT_THAT(text, HasSubstr("process_resident_memory_bytes 2\n"));
  EXPECT_THAT(text, HasSubstr("process_start_time_seconds 4\n"));
  EXPECT_THAT(text, HasSubstr("process_virtual_memory_bytes 3\n"));
}

TEST(ProcessMetrics, ThisProcessIsReadFromProcThroughACollector) {
  MetricsRegistry registry;
  registry.add_collector(process_metrics_text);
  const std::string text = registry.render();
  EXPECT_THAT(text, HasSubstr("process_open_fds "));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("process_open_fds 0\n"))) << "stdin at least";
  EXPECT_THAT(text, ::testing::Not(HasSubstr("process_resident_memory_bytes 0\n")));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("process_start_time_seconds 0\n")));
}

}  // namespace
}  // namespace ic::observability
