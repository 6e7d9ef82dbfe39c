#include "core/aimd_limit.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <cmath>
#include <optional>
#include <set>
#include <vector>

#include "testing/clocks.hpp"

namespace ic {
namespace {

using testing::ManualClock;
using namespace std::chrono_literals;

// One call, admitted and over: what it showed reaches the limit.
void call(AimdLimit& limit, Millis latency, bool failed) {
  const std::optional<AimdLimit::Ticket> ticket = limit.try_acquire();
  ASSERT_TRUE(ticket.has_value());
  limit.release(*ticket, latency, failed);
}

// Admits `n` calls at once.
std::vector<AimdLimit::Ticket> admit(AimdLimit& limit, int n) {
  std::vector<AimdLimit::Ticket> tickets;
  for (int i = 0; i < n; ++i) {
    const std::optional<AimdLimit::Ticket> ticket = limit.try_acquire();
    if (!ticket) break;
    tickets.push_back(*ticket);
  }
  return tickets;
}

TEST(AimdLimitTest, StartsAtTheMaximumAndAdmitsThatMany) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 3}, clock);
  EXPECT_EQ(limit.limit(), 3);
  const std::optional<AimdLimit::Ticket> first = limit.try_acquire();
  EXPECT_TRUE(first);
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_FALSE(limit.try_acquire());
  EXPECT_EQ(limit.in_flight(), 3);
  ASSERT_TRUE(first);
  limit.release(*first, 10ms, false);
  EXPECT_TRUE(limit.try_acquire());
}

TEST(AimdLimitTest, AFailureCutsTheLimitByAQuarterDownToTheMinimum) {
  ManualClock clock;
  AimdLimit limit({.min = 2, .max = 16}, clock);
  call(limit, 10ms, true);
  EXPECT_EQ(limit.limit(), 12);
  for (int i = 0; i < 20; ++i) call(limit, 10ms, true);
  EXPECT_EQ(limit.limit(), 2);
}

TEST(AimdLimitTest, ASlowCallCountsAsOverload) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 8, .slow_call = 2000ms}, clock);
  call(limit, 1999ms, false);
  EXPECT_EQ(limit.limit(), 8);
  call(limit, 2000ms, false);
  EXPECT_EQ(limit.limit(), 6);
}

// The month-end start over TLS: a thousand debits admitted together, the handshakes making
// some of them slow. One congestion event, one decrease (it took 1,024 to 17 when each cut).
TEST(AimdLimitTest, ABurstOfSlowCallsAdmittedTogetherCutsOnce) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 1024, .slow_call = 2000ms}, clock);
  const std::vector<AimdLimit::Ticket> burst = admit(limit, 1000);
  ASSERT_EQ(burst.size(), 1000u);
  for (std::size_t i = 0; i < 14; ++i) limit.release(burst[i], 4300ms, false);
  EXPECT_EQ(limit.limit(), 768);
  for (std::size_t i = 14; i < burst.size(); ++i) limit.release(burst[i], 200ms, false);
  EXPECT_GE(limit.limit(), 768);
  EXPECT_EQ(limit.in_flight(), 0);
}

// An outage's burst of failures is one event for the limit too; opening the circuit on the
// failure rate is the circuit breaker's job, which counts each of them.
TEST(AimdLimitTest, FailuresAdmittedTogetherCutOnce) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 32}, clock);
  for (const AimdLimit::Ticket ticket : admit(limit, 32)) limit.release(ticket, 5ms, true);
  EXPECT_EQ(limit.limit(), 24);
}

// Evidence from a call admitted at the reduced level is new: it cuts again, once.
TEST(AimdLimitTest, ASlowCallAdmittedAfterACutCutsAgain) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 16, .slow_call = 2000ms}, clock);
  const std::vector<AimdLimit::Ticket> before = admit(limit, 8);
  limit.release(before[0], 2500ms, false);
  ASSERT_EQ(limit.limit(), 12);
  const std::vector<AimdLimit::Ticket> after = admit(limit, 2);
  for (std::size_t i = 1; i < before.size(); ++i) limit.release(before[i], 2500ms, false);
  EXPECT_EQ(limit.limit(), 12) << "admitted before the cut: old news";
  limit.release(after[0], 2500ms, false);
  EXPECT_EQ(limit.limit(), 9);
  limit.release(after[1], 0ms, true);
  EXPECT_EQ(limit.limit(), 9) << "admitted with after[0], before its cut";
}

// A late slow call from before the cut neither cuts nor counts: the successes earned since the
// cut still make the +1.
TEST(AimdLimitTest, OldNewsIsNeitherACutNorASuccess) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 10}, clock);
  const std::vector<AimdLimit::Ticket> first = admit(limit, 2);
  limit.release(first[0], 1ms, true);  // 10 -> 7
  ASSERT_EQ(limit.limit(), 7);
  std::vector<AimdLimit::Ticket> busy = admit(limit, 3);  // 4 of 7 in flight: near it
  for (int i = 0; i < 6; ++i) {
    limit.release(busy.back(), 1ms, false);
    busy.pop_back();
    busy.push_back(limit.try_acquire().value());
  }
  limit.release(first[1], 3000ms, true);
  busy.push_back(limit.try_acquire().value());
  EXPECT_EQ(limit.limit(), 7);
  limit.release(busy.back(), 1ms, false);  // the seventh success near the limit
  EXPECT_EQ(limit.limit(), 8);
}

TEST(AimdLimitTest, GrowsByOneAfterALimitsWorthOfSuccessesNearTheLimit) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 10}, clock);
  call(limit, 1ms, true);  // 10 -> 7
  ASSERT_EQ(limit.limit(), 7);
  for (int round = 0; round < 7; ++round) {
    const std::vector<AimdLimit::Ticket> tickets = admit(limit, 4);  // 4 of 7 in flight: near it
    ASSERT_EQ(tickets.size(), 4u);
    for (const AimdLimit::Ticket ticket : tickets) limit.release(ticket, 1ms, false);
  }
  EXPECT_EQ(limit.limit(), 8);
}

TEST(AimdLimitTest, SuccessesWhileMostlyIdleDoNotRaiseIt) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 10}, clock);
  call(limit, 1ms, true);                                 // 7
  for (int i = 0; i < 100; ++i) call(limit, 1ms, false);  // one in flight of seven
  EXPECT_EQ(limit.limit(), 7);
}

TEST(AimdLimitTest, NeverAboveTheMaximum) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 2}, clock);
  for (int i = 0; i < 50; ++i) {
    const std::vector<AimdLimit::Ticket> tickets = admit(limit, 2);
    ASSERT_EQ(tickets.size(), 2u);
    for (const AimdLimit::Ticket ticket : tickets) limit.release(ticket, 1ms, false);
  }
  EXPECT_EQ(limit.limit(), 2);
}

TEST(AimdLimitTest, RestartRampsLinearlyFromTheMinimum) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 11, .ramp = 5000ms}, clock);
  limit.restart();
  EXPECT_EQ(limit.limit(), 1);
  clock.advance(2500ms);
  EXPECT_EQ(limit.limit(), 6);
  clock.advance(2500ms);
  EXPECT_EQ(limit.limit(), 11);
  clock.advance(10s);
  EXPECT_EQ(limit.limit(), 11);
}

TEST(AimdLimitTest, RestartForgetsTheOutagesDecreases) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 8, .ramp = 4000ms}, clock);
  for (int i = 0; i < 10; ++i) call(limit, 1ms, true);
  ASSERT_EQ(limit.limit(), 1);
  limit.restart();
  clock.advance(2s);
  EXPECT_EQ(limit.limit(), 4);
  clock.advance(2s);
  EXPECT_EQ(limit.limit(), 8);
}

// Calls still in flight when the circuit closed were admitted during the outage: their late
// failures do not cut the ramp.
TEST(AimdLimitTest, CallsAdmittedBeforeARestartDoNotCutIt) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 8, .ramp = 4000ms}, clock);
  const std::vector<AimdLimit::Ticket> outage = admit(limit, 4);
  limit.restart();
  for (const AimdLimit::Ticket ticket : outage) limit.release(ticket, 10s, true);
  clock.advance(4s);
  EXPECT_EQ(limit.limit(), 8);
  call(limit, 10s, true);
  EXPECT_EQ(limit.limit(), 6) << "admitted after the restart: it cuts";
}

TEST(AimdLimitTest, TheRampHoldsCallersBack) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 4, .ramp = 3000ms}, clock);
  limit.restart();
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_FALSE(limit.try_acquire());
  clock.advance(3s);
  EXPECT_TRUE(limit.try_acquire());
}

// Each step of the ramp, where the limit first admits one more call; none once it has ended.
TEST(AimdLimitTest, NextGrowthIsEachStepOfTheRamp) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 4, .ramp = 3000ms}, clock);
  EXPECT_EQ(limit.next_growth(), std::nullopt) << "no ramp";
  limit.restart();
  const Instant start = clock.now();
  for (const Millis step : {1000ms, 2000ms, 3000ms}) {
    const std::optional<Instant> next = limit.next_growth();
    ASSERT_TRUE(next.has_value());
    EXPECT_EQ(*next, start + step);
    const int before = limit.limit();
    clock.set(*next - 1ms);
    EXPECT_EQ(limit.limit(), before) << "not a millisecond sooner";
    clock.set(*next);
    EXPECT_EQ(limit.limit(), before + 1);
  }
  EXPECT_EQ(limit.next_growth(), std::nullopt) << "the ramp has ended";
}

TEST(AimdLimitTest, AZeroRampRestartsAtOnce) {
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = 4, .ramp = 0ms}, clock);
  limit.restart();
  EXPECT_EQ(limit.limit(), 4);
}

TEST(AimdLimitTest, ABadConfigurationIsMadeSane) {
  ManualClock clock;
  AimdLimit limit({.min = 0, .max = -3, .backoff = 2.0}, clock);
  EXPECT_EQ(limit.limit(), 1);
  EXPECT_TRUE(limit.try_acquire());
  EXPECT_FALSE(limit.try_acquire());
}

// For any interleaving of admissions, releases and restarts, a failed or slow call cuts the
// limit exactly when nothing cut it (or restarted it) since that call was admitted, so there
// are never more cuts than admission epochs with a slow call. The ceiling is high enough that
// no cut reaches the floor and no success grows the estimate, so each cut shows in estimate().
RC_GTEST_PROP(AimdLimitProperty, OneCutPerEpochWithASlowCall, ()) {
  enum class Step { Admit, Fast, Slow, Fail, Restart };
  constexpr int kCeiling = 1'000'000'000;
  const auto kinds = rc::gen::weightedElement<Step>(
      {{4, Step::Admit}, {2, Step::Fast}, {2, Step::Slow}, {1, Step::Fail}, {1, Step::Restart}});
  const auto steps = *rc::gen::container<std::vector<std::pair<Step, int>>>(
      *rc::gen::inRange<std::size_t>(0, 64), rc::gen::pair(kinds, rc::gen::inRange(0, 1000)));
  ManualClock clock;
  AimdLimit limit({.min = 1, .max = kCeiling, .slow_call = 2000ms, .ramp = 0ms}, clock);
  // The model: how many cuts and restarts so far, and that count at each call's admission.
  struct Call {
    AimdLimit::Ticket ticket;
    int epoch;
  };
  std::vector<Call> in_flight;
  int epoch = 0;
  int cuts = 0;
  double estimate = kCeiling;
  std::set<int> slow_epochs;
  for (const auto& [step, pick] : steps) {
    if (step == Step::Admit) {
      const std::optional<AimdLimit::Ticket> ticket = limit.try_acquire();
      RC_ASSERT(ticket.has_value());
      in_flight.push_back({*ticket, epoch});
    } else if (step == Step::Restart) {
      limit.restart();
      ++epoch;
      estimate = kCeiling;
    } else if (!in_flight.empty()) {
      const auto done = in_flight.begin() + pick % static_cast<int>(in_flight.size());
      const bool bad = step != Step::Fast;
      limit.release(done->ticket, step == Step::Slow ? 2000ms : 10ms, step == Step::Fail);
      if (bad) slow_epochs.insert(done->epoch);
      if (bad && done->epoch == epoch) {
        ++epoch;
        ++cuts;
        estimate = std::floor(estimate * 0.75);
      }
      in_flight.erase(done);
    }
    RC_ASSERT(limit.estimate() == estimate);
    RC_ASSERT(limit.in_flight() == static_cast<int>(in_flight.size()));
  }
  RC_ASSERT(cuts <= static_cast<int>(slow_epochs.size()));
}

}  // namespace
}  // namespace ic
