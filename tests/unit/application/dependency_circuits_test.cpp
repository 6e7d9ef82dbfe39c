// The intake gate the circuits imply: open while the store and debit circuits are closed,
// paused while either is not, one message when a probe is due and nobody holds the turn.
#include "application/dependency_circuits.hpp"

#include <gtest/gtest.h>

#include "testing/advancing_waiter.hpp"
#include "testing/clocks.hpp"
#include "testing/fixed_random.hpp"

namespace ic::application {
namespace {

using namespace std::chrono_literals;
using testing::AdvancingWaiter;
using testing::FixedRandom;
using testing::ManualClock;

struct Seen final : CircuitObserver {
  std::vector<bool> paused;
  std::vector<std::pair<Dependency, Millis>> retry_after;
  void on_intake_paused(bool p) override { paused.push_back(p); }
  void on_retry_after(Dependency d, Millis after) override { retry_after.emplace_back(d, after); }
};

class DependencyCircuitsTest : public ::testing::Test {
 protected:
  ManualClock clock;
  FixedRandom random{1.0};
  AdvancingWaiter waiter{clock};
  Seen seen;
  DependencyCircuits circuits{
      {.window = 4, .min_calls = 2, .failure_percent = 50, .probe_min = 1s, .probe_max = 8s},
      clock,
      random,
      waiter,
      &seen};

  void open(Dependency d) {
    for (int i = 0; i < 2; ++i) circuits.circuit(d).observe(CallOutcome::Failure);
    ASSERT_EQ(circuits.circuit(d).state(), CircuitState::Open);
  }
};

TEST_F(DependencyCircuitsTest, ClosedCircuitsLeaveIntakeOpen) {
  const auto decision = circuits.before_receive();
  EXPECT_EQ(decision.max_messages, 10);
  EXPECT_FALSE(decision.probe);
  EXPECT_EQ(seen.paused, std::vector<bool>{false});
}

TEST_F(DependencyCircuitsTest, AnOpenNotifyCircuitDoesNotPauseIntake) {
  open(Dependency::Notify);
  EXPECT_EQ(circuits.before_receive().max_messages, 10);
}

TEST_F(DependencyCircuitsTest, AnOpenDebitCircuitPausesUntilTheProbeIsDue) {
  open(Dependency::Debit);
  auto decision = circuits.before_receive();
  EXPECT_EQ(decision.max_messages, 0);
  EXPECT_GT(decision.recheck, 0ms);
  clock.advance(1s);
  decision = circuits.before_receive();
  EXPECT_EQ(decision.max_messages, 1);
  EXPECT_TRUE(decision.probe);
  EXPECT_EQ(seen.paused, (std::vector<bool>{true}));
}

TEST_F(DependencyCircuitsTest, OneProbeReceiveAtATime) {
  open(Dependency::Store);
  clock.advance(1s);
  const auto probe = circuits.before_receive();
  ASSERT_TRUE(probe.probe);
  EXPECT_EQ(circuits.before_receive().max_messages, 0) << "the receive is still out";
  circuits.after_receive(probe, 1);
  EXPECT_EQ(circuits.before_receive().max_messages, 0) << "its message is on its way";
  clock.advance(DependencyCircuits::kProbeReceiveExpiry);
  EXPECT_EQ(circuits.before_receive().max_messages, 1) << "a message that never probed expires";
}

TEST_F(DependencyCircuitsTest, AnEmptyProbeReceiveLetsTheNextOneGo) {
  open(Dependency::Debit);
  clock.advance(1s);
  const auto probe = circuits.before_receive();
  circuits.after_receive(probe, 0);
  EXPECT_EQ(circuits.before_receive().max_messages, 1);
}

TEST_F(DependencyCircuitsTest, WhileTheProbeRunsOrIsHeldNothingIsReceived) {
  open(Dependency::Debit);
  clock.advance(1s);
  const auto receive = circuits.before_receive();
  circuits.after_receive(receive, 1);
  CircuitBreaker& debit = circuits.circuit(Dependency::Debit);
  const CircuitPermit probe = debit.try_acquire();
  ASSERT_EQ(probe.admission, Admission::Probe);
  circuits.probe_started();
  EXPECT_EQ(circuits.before_receive().max_messages, 0) << "half-open";
  debit.record(probe, CallOutcome::Failure, /*keep_probe=*/true);
  clock.advance(1h);
  EXPECT_EQ(circuits.before_receive().max_messages, 0) << "the holder keeps the turn";
  const CircuitPermit again = debit.try_acquire_reserved();
  debit.record(again, CallOutcome::Success);
  EXPECT_EQ(circuits.before_receive().max_messages, 10) << "closed: intake resumes";
  EXPECT_EQ(seen.paused, (std::vector<bool>{true, false}));
}

TEST_F(DependencyCircuitsTest, RetryAfterDefersTheDependencyAndPausesIntakeForDebit) {
  circuits.defer(Dependency::Debit, 6s);
  EXPECT_EQ(circuits.deferred(Dependency::Debit), 6000ms);
  EXPECT_EQ(circuits.before_receive().max_messages, 0);
  clock.advance(5s);
  circuits.defer(Dependency::Debit, 500ms);  // an earlier one never shortens it
  EXPECT_EQ(circuits.deferred(Dependency::Debit), 1000ms);
  clock.advance(1s);
  EXPECT_EQ(circuits.deferred(Dependency::Debit), std::nullopt);
  EXPECT_EQ(circuits.before_receive().max_messages, 10);
  ASSERT_EQ(seen.retry_after.size(), 2u);
  EXPECT_EQ(seen.retry_after[0], std::pair(Dependency::Debit, Millis{6000}));
}

TEST_F(DependencyCircuitsTest, ParkDelayFollowsTheProbeScheduleAndNeverUndercutsTheMinimum) {
  open(Dependency::Debit);
  EXPECT_EQ(circuits.park_delay(Dependency::Debit), 1000ms);
  clock.advance(1s);
  CircuitBreaker& debit = circuits.circuit(Dependency::Debit);
  debit.record(debit.try_acquire(), CallOutcome::Failure);  // next probe in 2 s
  EXPECT_EQ(circuits.park_delay(Dependency::Debit), 2000ms);
  clock.advance(1900ms);
  EXPECT_EQ(circuits.park_delay(Dependency::Debit), 1000ms);
}

TEST_F(DependencyCircuitsTest, ClosingTheDebitCircuitCallsTheRampHook) {
  int ramps = 0;
  circuits.on_debit_closed([&] { ++ramps; });
  open(Dependency::Debit);
  clock.advance(1s);
  CircuitBreaker& debit = circuits.circuit(Dependency::Debit);
  debit.record(debit.try_acquire(), CallOutcome::Success);
  EXPECT_EQ(ramps, 1);
  open(Dependency::Store);
  clock.advance(1s);
  CircuitBreaker& store = circuits.circuit(Dependency::Store);
  store.record(store.try_acquire(), CallOutcome::Success);
  EXPECT_EQ(ramps, 1) << "only the debit circuit ramps the bank";
}

}  // namespace
}  // namespace ic::application
