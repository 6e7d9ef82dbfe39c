// The metrics registry: exact Prometheus text, escaping, histogram buckets, misuse, and exact
// totals under concurrent updates (these run under TSan too).
#include "observability/metrics.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <stdexcept>
#include <thread>
#include <vector>

namespace ic::observability {
namespace {

TEST(Metrics, RendersASmallRegistryExactly) {
  MetricsRegistry registry;
  // Registered out of order: the text is sorted by name, then by label values.
  auto& seconds = registry.histogram("ic_processing_seconds", "Time per message.", {0.125, 1});
  auto& received = registry.counter("ic_messages_received_total", "Messages received.");
  auto& outcomes =
      registry.counter("ic_claim_outcomes_total", "Claim outcomes by kind.", {"outcome"});
  auto& in_flight = registry.gauge("ic_in_flight", "Messages being processed.");

  received.with({}).inc(3);
  outcomes.with({"DUPLICATE_DONE"}).inc();
  outcomes.with({"ACQUIRED"}).inc();
  outcomes.with({"ACQUIRED"}).inc();
  in_flight.with({}).set(4.5);
  for (double v : {0.0625, 0.125, 0.5, 5.0}) seconds.with({}).observe(v);

  EXPECT_EQ(registry.render(),
            "# HELP ic_claim_outcomes_total Claim outcomes by kind.\n"
            "# TYPE ic_claim_outcomes_total counter\n"
            "ic_claim_outcomes_total{outcome=\"ACQUIRED\"} 2\n"
            "ic_claim_outcomes_total{outcome=\"DUPLICATE_DONE\"} 1\n"
            "# HELP ic_in_flight Messages being processed.\n"
            "# TYPE ic_in_flight gauge\n"
            "ic_in_flight 4.5\n"
            "# HELP ic_messages_received_total Messages received.\n"
            "# TYPE ic_messages_received_total counter\n"
            "ic_messages_received_total 3\n"
            "# HELP ic_processing_seconds Time per message.\n"
            "# TYPE ic_processing_seconds histogram\n"
            "ic_processing_seconds_bucket{le=\"0.125\"} 2\n"
            "ic_processing_seconds_bucket{le=\"1\"} 3\n"
            "ic_processing_seconds_bucket{le=\"+Inf\"} 4\n"
            "ic_processing_seconds_sum 5.6875\n"
            "ic_processing_seconds_count 4\n");
}

TEST(Metrics, UnlabelledSeriesIsExposedAsZeroBeforeFirstUse) {
  MetricsRegistry registry;
  (void)registry.counter("c_total", "C.");
  (void)registry.counter("labelled_total", "L.", {"kind"});
  EXPECT_EQ(registry.render(),
            "# HELP c_total C.\n# TYPE c_total counter\nc_total 0\n"
            "# HELP labelled_total L.\n# TYPE labelled_total counter\n");
}

TEST(Metrics, EscapesLabelValuesAndHelpText) {
  MetricsRegistry registry;
  auto& family = registry.counter("errors_total", "Errors by \"detail\"\\path\nsecond line",
                                  {"detail", "queue"});
  family.with({"a\\b\"c\nd", "charge-due"}).inc();
  EXPECT_EQ(registry.render(),
            "# HELP errors_total Errors by \"detail\"\\\\path\\nsecond line\n"
            "# TYPE errors_total counter\n"
            "errors_total{detail=\"a\\\\b\\\"c\\nd\",queue=\"charge-due\"} 1\n");
}

TEST(Metrics, GaugeRendersSpecialValues) {
  MetricsRegistry registry;
  auto& g = registry.gauge("g", "G.", {"k"});
  g.with({"nan"}).set(std::numeric_limits<double>::quiet_NaN());
  g.with({"neg"}).set(-std::numeric_limits<double>::infinity());
  g.with({"pos"}).set(std::numeric_limits<double>::infinity());
  g.with({"small"}).set(0.001);
  g.with({"up_down"}).inc();
  g.with({"up_down"}).inc();
  g.with({"up_down"}).dec();
  EXPECT_EQ(registry.render(),
            "# HELP g G.\n# TYPE g gauge\n"
            "g{k=\"nan\"} NaN\ng{k=\"neg\"} -Inf\ng{k=\"pos\"} +Inf\ng{k=\"small\"} 0.001\n"
            "g{k=\"up_down\"} 1\n");
}

TEST(Metrics, HistogramBucketsAreCumulativeWithInclusiveUpperBounds) {
  Histogram h{kDefaultSecondsBuckets};
  ASSERT_EQ(h.upper_bounds().size(), 12u);
  EXPECT_EQ(h.upper_bounds().front(), 0.005);
  EXPECT_EQ(h.upper_bounds().back(), 30);
  for (double v : {0.001, 0.005, 0.006, 0.3, 2.5, 29.0, 31.0, 1000.0}) h.observe(v);
  h.observe(std::numeric_limits<double>::quiet_NaN());  // ignored

  const Histogram::Snapshot snap = h.snapshot();
  ASSERT_EQ(snap.cumulative.size(), 13u);
  const std::vector<std::uint64_t> expected{2, 3, 3, 3, 3, 3, 4, 4, 5, 5, 5, 6, 8};
  EXPECT_EQ(snap.cumulative, expected);
  EXPECT_DOUBLE_EQ(snap.sum, 0.001 + 0.005 + 0.006 + 0.3 + 2.5 + 29.0 + 31.0 + 1000.0);
}

TEST(Metrics, LabelledHistogramPutsLeLastAndCountEqualsInfBucket) {
  MetricsRegistry registry;
  auto& h = registry.histogram("latency_seconds", "L.", {0.5}, {"method"});
  h.with({"POST"}).observe(0.25);
  h.with({"POST"}).observe(2);
  h.with({"GET"}).observe(0.5);
  EXPECT_EQ(registry.render(),
            "# HELP latency_seconds L.\n# TYPE latency_seconds histogram\n"
            "latency_seconds_bucket{method=\"GET\",le=\"0.5\"} 1\n"
            "latency_seconds_bucket{method=\"GET\",le=\"+Inf\"} 1\n"
            "latency_seconds_sum{method=\"GET\"} 0.5\n"
            "latency_seconds_count{method=\"GET\"} 1\n"
            "latency_seconds_bucket{method=\"POST\",le=\"0.5\"} 1\n"
            "latency_seconds_bucket{method=\"POST\",le=\"+Inf\"} 2\n"
            "latency_seconds_sum{method=\"POST\"} 2.25\n"
            "latency_seconds_count{method=\"POST\"} 2\n");
}

TEST(Metrics, HandlesAreStableAndRegistrationIsIdempotent) {
  MetricsRegistry registry;
  auto& family = registry.counter("x_total", "X.", {"a", "b"});
  Counter& handle = family.with({"1", "2"});
  (void)family.with({"1", "3"});
  (void)family.with({"0", "9"});
  EXPECT_EQ(&handle, &family.with({"1", "2"}));
  EXPECT_EQ(&family, &registry.counter("x_total", "ignored", {"a", "b"}));
}

TEST(Metrics, MisuseIsABrokenInvariant) {
  MetricsRegistry registry;
  auto& family = registry.counter("x_total", "X.", {"a"});
  EXPECT_THROW((void)family.with({}), std::invalid_argument);
  EXPECT_THROW((void)family.with({"1", "2"}), std::invalid_argument);
  EXPECT_THROW((void)registry.gauge("x_total", "X."), std::invalid_argument);
  EXPECT_THROW((void)registry.counter("x_total", "X.", {"b"}), std::invalid_argument);
  EXPECT_THROW((void)registry.counter("1bad", "X."), std::invalid_argument);
  EXPECT_THROW((void)registry.counter("bad-name", "X."), std::invalid_argument);
  EXPECT_THROW((void)registry.counter("ok_total", "X.", {"__reserved"}), std::invalid_argument);
  EXPECT_THROW((void)registry.counter("ok_total", "X.", {"a:b"}), std::invalid_argument);
  EXPECT_THROW((void)registry.histogram("h", "H.", {1}, {"le"}), std::invalid_argument);
  EXPECT_THROW((void)registry.histogram("h", "H.", {1, 1}), std::invalid_argument);
  EXPECT_THROW((void)registry.histogram("h", "H.", {2, 1}), std::invalid_argument);
  EXPECT_THROW((void)registry.histogram("h", "H.", {1, std::numeric_limits<double>::infinity()}),
               std::invalid_argument);
  EXPECT_NO_THROW((void)registry.counter("ns:sub_total", "Colons are legal in metric names."));
}

TEST(Metrics, ConcurrentUpdatesSumExactly) {
  MetricsRegistry registry;
  auto& outcomes = registry.counter("outcomes_total", "O.", {"outcome"});
  auto& in_flight = registry.gauge("in_flight", "F.");
  auto& seconds = registry.histogram("seconds", "S.", kDefaultSecondsBuckets, {"outcome"});
  constexpr int kThreads = 8;
  constexpr int kIterations = 5000;
  const std::vector<std::string> names{"ACQUIRED", "DUPLICATE_DONE", "PAYLOAD_MISMATCH"};
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        Counter& mine = outcomes.with({"thread_" + std::to_string(t)});  // created concurrently
        for (int i = 0; i < kIterations; ++i) {
          const std::string& name = names[static_cast<std::size_t>(i) % names.size()];
          outcomes.with({name}).inc();  // lookup on every call
          mine.inc();
          in_flight.with({}).add(1);
          seconds.with({name}).observe(0.01);
          if (i % 500 == 0) (void)registry.render();  // scrapes race with updates
        }
      });
    }
  }
  std::uint64_t shared_total = 0;
  for (const auto& name : names) shared_total += outcomes.with({name}).value();
  EXPECT_EQ(shared_total, static_cast<std::uint64_t>(kThreads) * kIterations);
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_EQ(outcomes.with({"thread_" + std::to_string(t)}).value(),
              static_cast<std::uint64_t>(kIterations));
  }
  EXPECT_EQ(in_flight.with({}).value(), static_cast<double>(kThreads) * kIterations);
  std::uint64_t observed = 0;
  for (const auto& name : names) observed += seconds.with({name}).snapshot().cumulative.back();
  EXPECT_EQ(observed, static_cast<std::uint64_t>(kThreads) * kIterations);
}

}  // namespace
}  // namespace ic::observability
