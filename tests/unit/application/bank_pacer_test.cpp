// The bank pacer: the AIMD limit learns from each debit, the token bucket spaces them, and a
// stop while waiting sends nothing.
#include "application/bank_pacer.hpp"

#include <gtest/gtest.h>

#include <iostream>
#include <optional>

#include "event/run_blocking.hpp"
#include "testing/advancing_waiter.hpp"
#include "testing/fakes.hpp"

namespace ic::testing {
namespace {

struct LimitSeen final : application::PacerObserver {
  std::vector<std::pair<int, int>> seen;
  void on_bank_limit(int limit, int in_flight) override { seen.emplace_back(limit, in_flight); }
};

class BankPacerTest : public ::testing::Test {
 protected:
  ManualClock clock;
  event::EventLoop loop;
  AdvancingWaiter waiter{clock, &loop};
  FakeBank bank;
  AimdLimit limit{{.min = 1, .max = 8, .slow_call = 2000ms}, clock};
  LimitSeen seen;
  const domain::Charge charge = make_charge();
};

TEST_F(BankPacerTest, PassesTheDebitThroughAndReportsTheLimit) {
  application::BankPacer pacer(bank, limit, nullptr, clock, waiter, &seen);
  EXPECT_TRUE(
      std::holds_alternative<domain::Debited>(event::run_on(loop, pacer.debit(charge, "k1"))));
  EXPECT_EQ(bank.calls(), 1);
  ASSERT_FALSE(seen.seen.empty());
  EXPECT_EQ(seen.seen.front(), std::pair(8, 1)) << "in flight during the call";
  EXPECT_EQ(seen.seen.back(), std::pair(8, 0));
}

TEST_F(BankPacerTest, AnUnavailableBankShrinksTheLimit) {
  application::BankPacer pacer(bank, limit, nullptr, clock, waiter);
  bank.script(charge.id.value(), {domain::DebitUnavailable{"HTTP 503"}});
  (void)event::run_on(loop, pacer.debit(charge, "k1"));
  EXPECT_EQ(limit.limit(), 6);
}

TEST_F(BankPacerTest, ASlowBankShrinksTheLimit) {
  application::BankPacer pacer(bank, limit, nullptr, clock, waiter);
  bank.before_debit = [&](const domain::Charge&) { clock.advance(2500ms); };
  (void)event::run_on(loop, pacer.debit(charge, "k1"));
  EXPECT_EQ(limit.limit(), 6);
}

TEST_F(BankPacerTest, TheTokenBucketSpacesDebits) {
  TokenBucket bucket(2.0, 1.0, clock);
  application::BankPacer pacer(bank, limit, &bucket, clock, waiter);
  const Instant start = clock.now();
  for (int i = 0; i < 5; ++i)
    (void)event::run_on(loop, pacer.debit(charge, "k" + std::to_string(i)));
  EXPECT_EQ(bank.calls(), 5);
  EXPECT_EQ(clock.now() - start, 2000ms) << "one at once, then one every 500 ms";
}

TEST_F(BankPacerTest, AStopWhileWaitingForASlotSendsNothing) {
  AimdLimit full({.min = 1, .max = 1}, clock);
  ASSERT_TRUE(full.try_acquire());  // the one slot is taken
  application::BankPacer pacer(bank, full, nullptr, clock, waiter);
  waiter.request_stop();
  const auto result = event::run_on(loop, pacer.debit(charge, "k1"));
  ASSERT_TRUE(std::holds_alternative<domain::DebitUnavailable>(result));
  EXPECT_EQ(bank.calls(), 0);
}

TEST_F(BankPacerTest, ARampHoldsCallersUntilItGrows) {
  AimdLimit ramped({.min = 1, .max = 4, .ramp = 1000ms}, clock);
  ramped.restart();
  ASSERT_TRUE(ramped.try_acquire());  // the ramp's one slot is taken
  application::BankPacer pacer(bank, ramped, nullptr, clock, waiter);
  const Instant start = clock.now();
  EXPECT_TRUE(
      std::holds_alternative<domain::Debited>(event::run_on(loop, pacer.debit(charge, "k1"))));
  EXPECT_GE(clock.now() - start, 250ms) << "waited until the ramp allowed a second call";
}

// Counts the waits that end: each is one waiting debit (or the pacer's ramp watcher) resumed.
class CountingWaiter final : public application::HoldWaiter {
 public:
  explicit CountingWaiter(application::HoldWaiter& inner) : inner_(inner) {}
  Task<bool> wait_until(Instant at) override {
    const bool waited = co_await inner_.wait_until(at);
    ++wakeups;
    co_return waited;
  }
  void notify_all() override { inner_.notify_all(); }
  void request_stop() override { inner_.request_stop(); }
  bool stop_requested() const override { return inner_.stop_requested(); }
  event::EventLoop& loop() override { return inner_.loop(); }
  Task<bool> wait_in(event::WaitQueue& line) override {
    const bool woken = co_await inner_.wait_in(line);
    ++wakeups;
    co_return woken;
  }

  long wakeups = 0;

 private:
  application::HoldWaiter& inner_;
};

// A bank answering after `latency` of the loop's clock.
class SlowBank final : public domain::AccountDebitPort {
 public:
  SlowBank(event::EventLoop& loop, Millis latency) : loop_(loop), latency_(latency) {}
  void set_latency(Millis latency) { latency_ = latency; }
  Task<domain::DebitResult> debit(const domain::Charge&, std::string_view key) override {
    (void)co_await event::sleep_for(loop_, latency_);
    ++debits;
    keys.emplace_back(key);
    co_return domain::Debited{"DBT-" + std::string(key), false};
  }
  int debits = 0;
  std::vector<std::string> keys;

 private:
  event::EventLoop& loop_;
  Millis latency_;
};

// Many debits queued behind a bank limit at its floor (1), on a loop whose clock moves by hand
// with the service's: the real LoopWaiter, a bank answering in 50 ms.
class WaitingDebits : public ::testing::Test {
 protected:
  void SetUp() override { loop.run_ready(); }
  void TearDown() override {
    counting.request_stop();
    while (finished < started) advance(1ms);
  }
  void start(int debits, AimdLimit& limit) {
    if (!pacer) pacer.emplace(bank, limit, nullptr, clock, counting);
    for (int i = 0; i < debits; ++i) {
      ++started;
      spawn(debit_one("k" + std::to_string(started)), [this](std::exception_ptr) { ++finished; });
    }
    loop.run_ready();
  }
  Task<void> debit_one(std::string key) {
    const domain::DebitResult result = co_await pacer->debit(charge, key);
    if (std::holds_alternative<domain::DebitUnavailable>(result)) ++unavailable;
  }
  void advance(Millis by) {
    for (Millis step{0}; step < by; step += 1ms) {
      steady.advance(1ms);
      clock.advance(1ms);
      loop.run_ready();
    }
  }

  ManualSteadyClock steady;
  ManualClock clock;
  event::EventLoop loop{steady};
  application::LoopWaiter waiter{loop, clock};
  CountingWaiter counting{waiter};
  SlowBank bank{loop, 50ms};
  AimdLimit at_floor{{.min = 1, .max = 1}, clock};
  AimdLimit growing{{.min = 1, .max = 2}, clock};
  AimdLimit ramping{{.min = 1, .max = 4, .ramp = 300ms}, clock};
  AimdLimit sixteen{{.min = 1, .max = 16, .slow_call = 2000ms}, clock};
  std::optional<application::BankPacer> pacer;
  const domain::Charge charge = make_charge();
  int started = 0;
  int finished = 0;
  int unavailable = 0;
};

// The figure docs/design.md quotes: wakeups of waiting debits in one simulated second with
// 1,000 of them waiting (printed; speed figures are reported, not asserted).
TEST_F(WaitingDebits, WakeupsPerSecondAtAThousandWaiting) {
  start(1001, at_floor);  // one in flight, 1,000 waiting
  const long before = counting.wakeups;
  advance(1000ms);
  const long wakeups = counting.wakeups - before;
  std::cout << "bank pacer: " << wakeups << " wakeups in one simulated second, 1,000 debits "
            << "waiting, bank limit 1, 50 ms debits (" << bank.debits << " debited)\n";
  EXPECT_EQ(bank.debits, 20) << "one at a time, 50 ms each";
}

// Each release wakes exactly the one waiter it hands its slot to, the first in line.
TEST_F(WaitingDebits, AReleaseWakesOneWaiterTheFirstInLine) {
  start(1001, at_floor);
  advance(49ms);  // just before the first debit ends
  const long before = counting.wakeups;
  advance(1ms);
  EXPECT_EQ(counting.wakeups - before, 1) << "one slot freed, one waiter woken";
  advance(50ms);
  EXPECT_EQ(bank.keys, (std::vector<std::string>{"k1", "k2"}));
}

// A release that grows the limit by one hands out two slots: two waiters wake, both call.
TEST_F(WaitingDebits, ALimitGrownByOneWakesTwo) {
  const std::optional<AimdLimit::Ticket> ticket = growing.try_acquire();
  ASSERT_TRUE(ticket);
  growing.release(*ticket, 0ms, /*failed=*/true);  // down to 1; the next success brings it to 2
  ASSERT_EQ(growing.limit(), 1);
  start(4, growing);
  advance(49ms);
  const long before = counting.wakeups;
  advance(1ms);
  EXPECT_EQ(growing.limit(), 2);
  EXPECT_EQ(counting.wakeups - before, 2);
  EXPECT_EQ(growing.in_flight(), 2);
}

// A slow-start ramp grows with time, not with releases: at each of its steps one more waiter
// is let in, so the line keeps the limit's every slot busy.
TEST_F(WaitingDebits, ARampLetsInOneMoreAtEachStep) {
  ramping.restart();
  start(101, ramping);
  for (const int step : {1, 2, 3}) {
    advance(99ms);
    EXPECT_EQ(ramping.in_flight(), step);
    advance(1ms);
    EXPECT_EQ(ramping.limit(), step + 1);
    EXPECT_EQ(ramping.in_flight(), step + 1) << "the step's slot is taken at once";
  }
}

// Sixteen debits admitted at once all come back slow (a bank's TLS handshakes at start-up):
// the limit is cut once, 16 to 12, not once per debit (to 1). The cut wakes nobody; the four
// debits that waited in line are let in as the slow ones leave room under the new limit, and
// being admitted after the cut, the first of them to come back slow cuts again, once.
TEST_F(WaitingDebits, ABurstOfSlowDebitsCutsTheLimitOnce) {
  bank.set_latency(2500ms);
  start(20, sixteen);
  ASSERT_EQ(sixteen.in_flight(), 16);
  const long before = counting.wakeups;
  advance(2500ms);
  EXPECT_EQ(sixteen.limit(), 12);
  EXPECT_EQ(counting.wakeups - before, 4) << "only the waiters, once each";
  EXPECT_EQ(sixteen.in_flight(), 4);
  advance(2500ms);
  EXPECT_EQ(sixteen.limit(), 9);
  EXPECT_EQ(bank.debits, 20);
}

// A stop wakes every waiter once, and none calls the bank.
TEST_F(WaitingDebits, AStopWakesEveryWaiterAndSendsNothingMore) {
  start(1001, at_floor);
  const long before = counting.wakeups;
  loop.post([this] { counting.request_stop(); });
  loop.run_ready();
  EXPECT_EQ(counting.wakeups - before, 1000);
  EXPECT_EQ(unavailable, 1000);
  advance(50ms);
  EXPECT_EQ(bank.keys.size(), 1u) << "only the one in flight";
}

}  // namespace
}  // namespace ic::testing
