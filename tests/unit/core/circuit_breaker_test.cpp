#include "core/circuit_breaker.hpp"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

#include "testing/clocks.hpp"
#include "testing/fixed_random.hpp"

namespace ic {
namespace {

using testing::FixedRandom;
using testing::ManualClock;
using namespace std::chrono_literals;

struct Recorder final : CircuitListener {
  std::vector<std::string> events;
  void on_transition(std::string_view dependency, CircuitState, CircuitState to, Instant) override {
    events.push_back(std::string(dependency) + "->" + std::string(to_string(to)));
  }
  void on_probe(std::string_view, bool success) override {
    events.push_back(success ? "probe ok" : "probe failed");
  }
};

class CircuitBreakerTest : public ::testing::Test {
 protected:
  CircuitConfig config{.window = 10,
                       .min_calls = 4,
                       .failure_percent = 50,
                       .probe_min = 1000ms,
                       .probe_max = 8000ms};
  ManualClock clock;
  FixedRandom random{1.0};  // equal jitter at its top: the full doubled delay
  Recorder recorder;

  void fail(CircuitBreaker& breaker, int n) {
    for (int i = 0; i < n; ++i) breaker.record(breaker.try_acquire(), CallOutcome::Failure);
  }
  void succeed(CircuitBreaker& breaker, int n) {
    for (int i = 0; i < n; ++i) breaker.record(breaker.try_acquire(), CallOutcome::Success);
  }
  std::unique_ptr<CircuitBreaker> opened() {
    auto breaker = std::make_unique<CircuitBreaker>("debit", config, clock, random, &recorder);
    fail(*breaker, 4);
    return breaker;
  }
};

TEST_F(CircuitBreakerTest, StaysClosedBelowTheMinimumNumberOfCalls) {
  CircuitBreaker breaker("debit", config, clock, random);
  fail(breaker, 3);
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
  fail(breaker, 1);
  EXPECT_EQ(breaker.state(), CircuitState::Open);
}

TEST_F(CircuitBreakerTest, OpensAtTheFailurePercentOfTheWindow) {
  CircuitBreaker breaker("debit", config, clock, random);
  succeed(breaker, 5);
  fail(breaker, 4);  // 4 of 9: under 50 %
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
  fail(breaker, 1);  // 5 of 10
  EXPECT_EQ(breaker.state(), CircuitState::Open);
}

TEST_F(CircuitBreakerTest, TheWindowForgetsOldOutcomes) {
  CircuitBreaker breaker("debit", config, clock, random);
  succeed(breaker, 5);
  fail(breaker, 2);      // 2 of 7
  succeed(breaker, 10);  // the two failures slide out of the 10-call window
  fail(breaker, 4);      // 4 of 10
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
  fail(breaker, 1);
  EXPECT_EQ(breaker.state(), CircuitState::Open);
}

TEST_F(CircuitBreakerTest, SuccessesAndIgnoredOutcomesNeverOpenIt) {
  CircuitBreaker breaker("debit", config, clock, random);
  for (int i = 0; i < 50; ++i) {
    breaker.record(breaker.try_acquire(), CallOutcome::Ignored);
    breaker.record(breaker.try_acquire(), CallOutcome::Success);
  }
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
}

TEST_F(CircuitBreakerTest, OpenRejectsUntilTheFirstProbeIsDue) {
  const auto owned = opened();
  CircuitBreaker& breaker = *owned;
  EXPECT_EQ(breaker.try_acquire().admission, Admission::Rejected);
  clock.advance(999ms);
  EXPECT_EQ(breaker.try_acquire().admission, Admission::Rejected);
  clock.advance(1ms);
  const CircuitPermit probe = breaker.try_acquire();
  EXPECT_EQ(probe.admission, Admission::Probe);
  EXPECT_EQ(breaker.state(), CircuitState::HalfOpen);
  // Exactly one probe at a time.
  EXPECT_EQ(breaker.try_acquire().admission, Admission::Rejected);
}

TEST_F(CircuitBreakerTest, ASuccessfulProbeClosesWithAFreshWindow) {
  const auto owned = opened();
  CircuitBreaker& breaker = *owned;
  clock.advance(1s);
  breaker.record(breaker.try_acquire(), CallOutcome::Success);
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
  fail(breaker, 3);  // the outage's failures are forgotten
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
  EXPECT_EQ(recorder.events, (std::vector<std::string>{"debit->open", "debit->half_open",
                                                       "probe ok", "debit->closed"}));
}

TEST_F(CircuitBreakerTest, FailedProbesDoubleTheDelayUpToTheCap) {
  const auto owned = opened();
  CircuitBreaker& breaker = *owned;
  std::vector<Millis> delays;
  for (int i = 0; i < 5; ++i) {
    const Instant before = breaker.snapshot().next_probe_at;
    clock.set(before);
    const CircuitPermit probe = breaker.try_acquire();
    ASSERT_EQ(probe.admission, Admission::Probe);
    breaker.record(probe, CallOutcome::Failure);
    delays.push_back(breaker.snapshot().next_probe_at - clock.now());
  }
  EXPECT_EQ(delays, (std::vector<Millis>{2000ms, 4000ms, 8000ms, 8000ms, 8000ms}));
  EXPECT_EQ(breaker.snapshot().failed_probes, 5);
}

TEST_F(CircuitBreakerTest, JitterNeverBringsAProbeBeforeTheMinimum) {
  random.set(0.0);  // equal jitter at its bottom: half the doubled delay
  const auto owned = opened();
  CircuitBreaker& breaker = *owned;
  clock.advance(1s);
  breaker.record(breaker.try_acquire(), CallOutcome::Failure);
  EXPECT_EQ(breaker.snapshot().next_probe_at - clock.now(), 1000ms);
  clock.advance(1s);
  breaker.record(breaker.try_acquire(), CallOutcome::Failure);
  EXPECT_EQ(breaker.snapshot().next_probe_at - clock.now(), 2000ms);
}

TEST_F(CircuitBreakerTest, AKeptProbeTurnBelongsToItsHolder) {
  const auto owned = opened();
  CircuitBreaker& breaker = *owned;
  clock.advance(1s);
  breaker.record(breaker.try_acquire(), CallOutcome::Failure, /*keep_probe=*/true);
  clock.advance(2s);
  EXPECT_EQ(breaker.try_acquire().admission, Admission::Rejected);  // not for a newcomer
  EXPECT_TRUE(breaker.snapshot().probe_reserved);
  const CircuitPermit again = breaker.try_acquire_reserved();
  EXPECT_EQ(again.admission, Admission::Probe);
  breaker.record(again, CallOutcome::Success);
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
}

TEST_F(CircuitBreakerTest, AReleasedReservationLetsAnyoneProbe) {
  const auto owned = opened();
  CircuitBreaker& breaker = *owned;
  clock.advance(1s);
  breaker.record(breaker.try_acquire(), CallOutcome::Failure, true);
  breaker.release_reservation();
  clock.advance(2s);
  EXPECT_EQ(breaker.try_acquire().admission, Admission::Probe);
}

TEST_F(CircuitBreakerTest, AnAbandonedProbeIsDueAgainAtOnce) {
  const auto owned = opened();
  CircuitBreaker& breaker = *owned;
  clock.advance(1s);
  const CircuitPermit probe = breaker.try_acquire();
  breaker.abandon(probe);
  EXPECT_EQ(breaker.state(), CircuitState::Open);
  EXPECT_EQ(breaker.try_acquire().admission, Admission::Probe);
}

TEST_F(CircuitBreakerTest, AnIgnoredProbeOutcomeHandsTheTurnBack) {
  const auto owned = opened();
  CircuitBreaker& breaker = *owned;
  clock.advance(1s);
  breaker.record(breaker.try_acquire(), CallOutcome::Ignored);
  EXPECT_EQ(breaker.snapshot().failed_probes, 0);
  EXPECT_EQ(breaker.try_acquire().admission, Admission::Probe);
}

TEST_F(CircuitBreakerTest, LateOutcomesOfCallsAdmittedBeforeOpeningAreDropped) {
  CircuitBreaker breaker("debit", config, clock, random);
  const CircuitPermit early = breaker.try_acquire();
  fail(breaker, 4);
  clock.advance(1s);
  const CircuitPermit probe = breaker.try_acquire();
  breaker.record(early, CallOutcome::Success);  // admitted while closed: says nothing now
  EXPECT_EQ(breaker.state(), CircuitState::HalfOpen);
  breaker.record(probe, CallOutcome::Success);
  EXPECT_EQ(breaker.state(), CircuitState::Closed);
}

TEST_F(CircuitBreakerTest, OpenedAtMarksTheStartOfTheSpell) {
  clock.advance(5s);
  const auto owned = opened();
  CircuitBreaker& breaker = *owned;
  const Instant opened_at = clock.now();
  clock.advance(1s);
  breaker.record(breaker.try_acquire(), CallOutcome::Failure);
  EXPECT_EQ(breaker.snapshot().opened_at, opened_at);
}

TEST_F(CircuitBreakerTest, ABadConfigurationIsMadeSane) {
  CircuitBreaker breaker("debit", {.window = 0, .min_calls = 5, .failure_percent = 0}, clock,
                         random);
  EXPECT_EQ(breaker.config().window, 1);
  EXPECT_EQ(breaker.config().min_calls, 1);
  fail(breaker, 1);
  EXPECT_EQ(breaker.state(), CircuitState::Open);
}

TEST_F(CircuitBreakerTest, ObservedOutcomesCountOnlyWhileClosed) {
  CircuitBreaker breaker("store", config, clock, random);
  for (int i = 0; i < 4; ++i) breaker.observe(CallOutcome::Failure);
  EXPECT_EQ(breaker.state(), CircuitState::Open);
  const Instant due = breaker.snapshot().next_probe_at;
  breaker.observe(CallOutcome::Failure);  // no effect on an open circuit's schedule
  EXPECT_EQ(breaker.snapshot().next_probe_at, due);
}

}  // namespace
}  // namespace ic
