// What the event loop reports: every stall counted in ic_event_loop_stalls_total and logged
// with what ran, at most once per window with how many were held back; lag samples in the
// ic_event_loop_lag_seconds histogram.
#include "app/telemetry/loop_telemetry.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "testing/clocks.hpp"

namespace ic::app {
namespace {

using namespace std::chrono_literals;
using ::testing::HasSubstr;

std::vector<nlohmann::json> stall_lines(const std::string& text) {
  std::vector<nlohmann::json> found;
  std::istringstream lines(text);
  for (std::string next; std::getline(lines, next);) {
    auto line = nlohmann::json::parse(next);
    if (line["msg"] == "event loop stalled") found.push_back(std::move(line));
  }
  return found;
}

TEST(LoopTelemetry, EveryStallIsCountedAndOnePerWindowLoggedWithWhatRan) {
  std::ostringstream out;
  observability::Logger log(*observability::parse_log_level("info"),
                            observability::ostream_sink(out));
  observability::MetricsRegistry metrics;
  testing::ManualClock clock;
  LoopTelemetry telemetry(log, metrics, clock);
  telemetry.on_stall("timer first", 150ms);
  telemetry.on_stall("posted second", 300ms);  // within the window: counted, held back
  clock.advance(observability::kRepeatWindow);
  telemetry.on_stall("coroutine of message m-3", 2s);
  telemetry.on_lag(3ms);

  ASSERT_TRUE(log.flush(10s));  // the logger's writer thread has written every line
  const auto lines = stall_lines(out.str());
  ASSERT_EQ(lines.size(), 2U);
  EXPECT_EQ(lines[0]["ran"], "timer first");
  EXPECT_EQ(lines[0]["tookMs"], 150);
  EXPECT_EQ(lines[0]["suppressed"], 0);
  EXPECT_EQ(lines[1]["ran"], "coroutine of message m-3");
  EXPECT_EQ(lines[1]["suppressed"], 1);
  const std::string text = metrics.render();
  EXPECT_THAT(text, HasSubstr("ic_event_loop_stalls_total 3\n"));
  EXPECT_THAT(text, HasSubstr("ic_event_loop_lag_seconds_bucket{le=\"0.005\"} 1\n"));
  EXPECT_THAT(text, HasSubstr("ic_event_loop_lag_seconds_count 1\n"));
}

}  // namespace
}  // namespace ic::app
