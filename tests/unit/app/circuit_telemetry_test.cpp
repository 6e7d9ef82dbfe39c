// What the circuits and the bank pacer report: one log line per transition with the contract's
// message and dependency, the ic_circuit_* / ic_intake_paused / ic_bank_* metrics, and the
// rate-limited retry warnings.
#include "app/telemetry/circuit_telemetry.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "app/telemetry/telemetry.hpp"
#include "app/telemetry/warning_limiter.hpp"
#include "testing/advancing_waiter.hpp"
#include "testing/clocks.hpp"
#include "testing/fakes.hpp"
#include "testing/fixed_random.hpp"

namespace ic::app {
namespace {

using namespace std::chrono_literals;
using application::Dependency;
using ::testing::HasSubstr;

class CircuitTelemetryTest : public ::testing::Test {
 protected:
  // What the logger wrote so far (it writes on its own thread).
  [[nodiscard]] std::string logged() {
    EXPECT_TRUE(log_.flush(Millis{10'000}));
    return out_.str();
  }
  std::vector<nlohmann::json> lines_with(std::string_view msg) {
    std::vector<nlohmann::json> found;
    std::istringstream lines(logged());
    for (std::string next; std::getline(lines, next);) {
      auto line = nlohmann::json::parse(next);
      if (line["msg"] == msg) found.push_back(std::move(line));
    }
    return found;
  }
  void open_debit() {
    for (int i = 0; i < 2; ++i) {
      circuits_.circuit(Dependency::Debit).observe(CallOutcome::Failure);
    }
  }

  std::ostringstream out_;
  observability::Logger log_{*observability::parse_log_level("debug"),
                             observability::ostream_sink(out_)};
  observability::MetricsRegistry metrics_;
  CircuitTelemetry telemetry_{log_, metrics_};
  testing::ManualClock clock_;
  testing::FixedRandom random_{1.0};
  testing::AdvancingWaiter waiter_{clock_};
  application::DependencyCircuits circuits_{
      {.window = 4, .min_calls = 2, .failure_percent = 50, .probe_min = 1s, .probe_max = 8s},
      clock_,
      random_,
      waiter_,
      &telemetry_};
};

TEST_F(CircuitTelemetryTest, EverySeriesExistsFromTheStart) {
  telemetry_.attach(circuits_);
  const std::string text = metrics_.render();
  for (const char* dependency : {"debit", "notify", "store"}) {
    EXPECT_THAT(text,
                HasSubstr(fmt::format("ic_circuit_state{{dependency=\"{}\"}} 0", dependency)));
    EXPECT_THAT(
        text, HasSubstr(fmt::format(
                  "ic_circuit_transitions_total{{dependency=\"{}\",to=\"open\"}} 0", dependency)));
    EXPECT_THAT(text, HasSubstr(fmt::format(
                          "ic_circuit_probes_total{{dependency=\"{}\",result=\"failure\"}} 0",
                          dependency)));
    EXPECT_THAT(text, HasSubstr(fmt::format("ic_circuit_open_seconds{{dependency=\"{}\"}} 0.000",
                                            dependency)));
    EXPECT_THAT(text, HasSubstr(fmt::format(
                          "ic_circuit_open_seconds_total{{dependency=\"{}\"}} 0.000", dependency)));
  }
  EXPECT_THAT(text, HasSubstr("ic_intake_paused 0"));
  EXPECT_THAT(text, HasSubstr(R"(ic_bank_retry_after_total{dependency="debit"} 0)"));
}

TEST_F(CircuitTelemetryTest, ATransitionIsOneLineAndMovesTheGauges) {
  telemetry_.attach(circuits_);
  open_debit();
  const auto opened = lines_with("circuit opened");
  ASSERT_EQ(opened.size(), 1u);
  EXPECT_EQ(opened[0]["dependency"], "debit");
  EXPECT_EQ(opened[0]["level"], "warn");
  circuits_.circuit(Dependency::Debit).observe(CallOutcome::Failure);  // no line per failure
  EXPECT_EQ(lines_with("circuit opened").size(), 1u);
  std::string text = metrics_.render();
  EXPECT_THAT(text, HasSubstr(R"(ic_circuit_state{dependency="debit"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(ic_circuit_transitions_total{dependency="debit",to="open"} 1)"));

  clock_.advance(1500ms);
  EXPECT_THAT(metrics_.render(), HasSubstr(R"(ic_circuit_open_seconds{dependency="debit"} 1.500)"));
  CircuitBreaker& debit = circuits_.circuit(Dependency::Debit);
  const CircuitPermit probe = debit.try_acquire();
  EXPECT_EQ(lines_with("circuit half-open").size(), 1u);
  clock_.advance(500ms);
  debit.record(probe, CallOutcome::Success);
  const auto closed = lines_with("circuit closed");
  ASSERT_EQ(closed.size(), 1u);
  EXPECT_EQ(closed[0]["openMs"], 2000);
  text = metrics_.render();
  EXPECT_THAT(text, HasSubstr(R"(ic_circuit_state{dependency="debit"} 0)"));
  EXPECT_THAT(text, HasSubstr(R"(ic_circuit_probes_total{dependency="debit",result="success"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(ic_circuit_open_seconds{dependency="debit"} 0.000)"));
  EXPECT_THAT(text, HasSubstr(R"(ic_circuit_open_seconds_total{dependency="debit"} 2.000)"));
}

TEST_F(CircuitTelemetryTest, IntakeRetryAfterAndTheBankLimitAreExported) {
  open_debit();
  (void)circuits_.before_receive();
  circuits_.defer(Dependency::Notify, 3s);
  telemetry_.on_bank_limit(5, 2);
  const std::string text = metrics_.render();
  EXPECT_THAT(text, HasSubstr("ic_intake_paused 1"));
  EXPECT_THAT(text, HasSubstr(R"(ic_bank_retry_after_total{dependency="notify"} 1)"));
  EXPECT_THAT(text, HasSubstr("ic_bank_concurrency_limit 5"));
  EXPECT_THAT(text, HasSubstr("ic_bank_in_flight 2"));
  EXPECT_EQ(lines_with("intake paused").size(), 1u);
}

TEST(WarningLimiterTest, OneWarningPerIntervalWithTheCountHeldBack) {
  testing::ManualClock clock;
  WarningLimiter limiter(clock, 10s);
  EXPECT_TRUE(limiter.next("debit").warn);
  EXPECT_FALSE(limiter.next("debit").warn);
  EXPECT_FALSE(limiter.next("debit").warn);
  EXPECT_TRUE(limiter.next("store").warn) << "each kind on its own";
  clock.advance(10s);
  const auto verdict = limiter.next("debit");
  EXPECT_TRUE(verdict.warn);
  EXPECT_EQ(verdict.suppressed, 2u);
  EXPECT_EQ(limiter.next("debit").suppressed, 0u);
}

TEST(ChargeTelemetryWarnings, RepeatedDebitUnavailableLinesStayButOnlyOneWarns) {
  std::ostringstream out;
  observability::Logger log(*observability::parse_log_level("debug"),
                            observability::ostream_sink(out));
  observability::MetricsRegistry metrics;
  testing::ManualClock clock;
  ChargeTelemetry telemetry(log, metrics, clock);
  const domain::Charge c = testing::make_charge();
  for (int i = 0; i < 3; ++i) telemetry.debit_finished(c, domain::DebitUnavailable{"HTTP 503"});
  clock.advance(WarningLimiter::kDefaultInterval);
  telemetry.debit_finished(c, domain::DebitUnavailable{"HTTP 503"});
  std::vector<std::string> levels;
  std::vector<std::uint64_t> suppressed;
  ASSERT_TRUE(log.flush(Millis{10'000}));
  std::istringstream lines(out.str());
  for (std::string next; std::getline(lines, next);) {
    const auto line = nlohmann::json::parse(next);
    ASSERT_EQ(line["msg"], "debit unavailable");
    levels.push_back(line["level"]);
    suppressed.push_back(line["suppressedWarnings"]);
  }
  EXPECT_EQ(levels, (std::vector<std::string>{"warn", "debug", "debug", "warn"}));
  EXPECT_EQ(suppressed.back(), 2u);
}

}  // namespace
}  // namespace ic::app
