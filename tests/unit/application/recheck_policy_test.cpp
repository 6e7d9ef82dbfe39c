// The in-progress re-check schedule: pure arithmetic on an injected "now", and the service using
// it once it has seen enough of its own effects.
#include "application/recheck_policy.hpp"

#include <gtest/gtest.h>

#include "testing/service_fixture.hpp"

namespace ic::application {
namespace {

using namespace std::chrono_literals;

constexpr Millis kLease = 60s;
const Instant kNow{Millis{1'000'000'000}};

RecheckInput holder_claimed(Millis ago, std::optional<Millis> typical) {
  return {
      .now = kNow, .lease_until = kNow - ago + kLease, .lease = kLease, .typical_effect = typical};
}

TEST(RecheckDelay, WithoutAnEstimateWaitsOutTheHoldersLease) {
  EXPECT_EQ(recheck_delay(holder_claimed(10s, std::nullopt)), 50s);
}

TEST(RecheckDelay, AFastHolderIsLookedAtAfterTheMinimum) {
  EXPECT_EQ(recheck_delay(holder_claimed(10ms, 30ms)), kMinRecheck);
}

TEST(RecheckDelay, ASlowEffectIsGivenTheTimeItProbablyStillNeeds) {
  EXPECT_EQ(recheck_delay(holder_claimed(2s, 7s)), 5s);
}

TEST(RecheckDelay, AHolderPastTheEstimateIsGivenHalfItsElapsedTime) {
  EXPECT_EQ(recheck_delay(holder_claimed(6s, 30ms)), 3s);
  EXPECT_EQ(recheck_delay(holder_claimed(1500ms, 30ms)), kMinRecheck);
}

TEST(RecheckDelay, NeverPastTheHoldersLease) {
  EXPECT_EQ(recheck_delay(holder_claimed(50s, 30ms)), 10s);
  EXPECT_EQ(recheck_delay(holder_claimed(59'500ms, 30ms)), 500ms);
  EXPECT_EQ(recheck_delay(holder_claimed(70s, 30ms)), 0ms) << "an expired lease: at once";
}

// The copy's whole schedule against a holder that takes `effect` while the estimate still says
// 300 ms (the bank slowed from 300 ms to 1.5 s a call): how late after the holder's final write
// the copy looks again, and how many claim requests it spends.
struct Schedule {
  Millis late;
  int checks;
};
Schedule copy_schedule(Millis arrives_after_claim, Millis effect) {
  Millis at = arrives_after_claim;
  int checks = 1;  // the refused claim itself
  while (at < effect) {
    // The container's visibility is whole seconds, rounded up (consumer/backoff.hpp).
    at += std::chrono::ceil<std::chrono::seconds>(recheck_delay(holder_claimed(at, 300ms)));
    ++checks;
  }
  return {at - effect, checks};
}

TEST(RecheckDelay, ALatencyShiftDelaysACopyByAtMostHalfTheEffect) {
  // The case: a 3.1 s effect (two 1.5 s bank calls) against a 300 ms estimate.
  EXPECT_LE(copy_schedule(100ms, 3100ms).late, 1s);
  // Whole seconds rounded down: an effect under 6 s is never looked at 2 s or more late.
  for (Millis effect = 100ms; effect < 6s; effect += 10ms) {
    for (Millis arrives : {Millis{0}, Millis{50}, Millis{900}}) {
      if (arrives < effect) {
        EXPECT_LT(copy_schedule(arrives, effect).late, 2s) << effect.count() << " ms effect";
      }
    }
  }
  for (Millis effect = 100ms; effect <= 40s; effect += 100ms) {
    for (Millis arrives : {Millis{0}, Millis{50}, Millis{900}}) {
      if (arrives >= effect) continue;
      const Schedule s = copy_schedule(arrives, effect);
      EXPECT_LE(s.late, std::max(kMinRecheck, effect / 2)) << effect.count() << " ms effect";
    }
  }
}

TEST(RecheckDelay, AHungHolderCostsAFewClaimsPerLease) {
  // Dead holder: its lease runs out at 60 s and the copy then claims.
  EXPECT_LE(copy_schedule(0ms, kLease).checks, 14);
}

TEST(EffectDurations, NeedsAFewSamplesBeforeItEstimates) {
  EffectDurations durations;
  for (std::size_t i = 1; i < EffectDurations::kMinSamples; ++i) durations.record(10ms);
  EXPECT_FALSE(durations.p90().has_value());
  durations.record(10ms);
  EXPECT_EQ(durations.p90(), 10ms);
}

TEST(EffectDurations, P90OfTheRecentWindow) {
  EffectDurations durations;
  for (int i = 1; i <= 100; ++i) durations.record(Millis{i});
  EXPECT_EQ(durations.p90(), 91ms);
  // The window forgets: a full window of slow effects replaces the fast ones.
  for (std::size_t i = 0; i < EffectDurations::kWindow; ++i) durations.record(5s);
  EXPECT_EQ(durations.p90(), 5s);
}

}  // namespace
}  // namespace ic::application

namespace ic::testing {
namespace {

TEST_F(ServiceFixture, InFlightDuplicateIsReCheckedSoonOnceEffectTimesAreKnown) {
  // The process the copies go to has learnt its effects take 30 ms.
  for (int i = 0; i < static_cast<int>(application::EffectDurations::kMinSamples); ++i) {
    bank.before_debit = [&](const domain::Charge&) { clock.advance(30ms); };
    ASSERT_TRUE(is_ack(deliver_elsewhere(
        make_charge(std::string("CHG-20261130-90000").append(std::to_string(i))))));
  }
  consumer::Disposition duplicate, recheck;
  bool copied = false;
  bank.before_debit = [&](const domain::Charge&) {
    if (std::exchange(copied, true)) return;
    duplicate = deliver_elsewhere(charge);
    clock.advance(application::kMinRecheck);
    recheck = deliver_elsewhere(charge, "hash-1", 2);
  };
  EXPECT_TRUE(is_ack(deliver(charge)));
  const auto* first = std::get_if<consumer::RetryLater>(&duplicate);
  const auto* second = std::get_if<consumer::RetryLater>(&recheck);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr) << "a re-check that sees IN_PROGRESS must not ack";
  EXPECT_EQ(first->after, application::kMinRecheck);
  EXPECT_EQ(second->after, application::kMinRecheck) << "a 30 ms effect, 1 s on: half of 1 s";
  EXPECT_EQ(second->reason, "in_progress");
  EXPECT_TRUE(is_ack(deliver(charge, "hash-1", 3))) << "once DONE, the copy is acked";
  EXPECT_EQ(bank.calls_for("CHG-20261130-000123"), 1);
}

}  // namespace
}  // namespace ic::testing
