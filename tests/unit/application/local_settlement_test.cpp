// A copy delivered to this process while its original is being handled here is settled by the
// original's final write: no trip back through the queue, no re-check, no store call at all.
// Original and copy are tasks of one loop, as in the consumer; the copy arrives while the
// original's debit is about to be sent. One whose claim was refused because the holder started
// between its look and its claim settles the same way.
#include <gtest/gtest.h>

#include <optional>

#include "application/charge_recovery_service.hpp"
#include "domain/charge_status.hpp"
#include "domain/forwarding_ports.hpp"
#include "event/run_blocking.hpp"
#include "event/wait_queue.hpp"
#include "testing/fakes.hpp"
#include "testing/fault_injecting_store.hpp"
#include "testing/in_memory_store.hpp"

namespace ic::testing {
namespace {

using namespace std::chrono_literals;

class CopyObserver final : public application::ChargeObserver {
 public:
  void copy_settled_locally(const domain::Charge&, Millis) override { ++settled; }
  int settled = 0;
};

class LocalSettlement : public ::testing::Test {
 protected:
  LocalSettlement() {
    store.before = [this](idempotency::StoreOperation operation) {
      if (operation == idempotency::StoreOperation::Claim) ++claims;
    };
  }

  // Delivers the original; while its debit is about to be sent, a copy arrives as another task.
  // Returns the copy's disposition.
  consumer::Disposition copy_during_original(consumer::Disposition& original) {
    std::optional<consumer::Disposition> copy;
    const application::Delivery delivery{.charge = charge, .payload_hash = "hash-1"};
    auto copy_task = [&]() -> Task<void> {
      copy = co_await service.handle(delivery, copy_heartbeat);
    };
    bank.before_debit = [&](const domain::Charge&) {
      if (copy_started) return;  // the original's debit only
      copy_started = true;
      spawn(copy_task());  // runs until it waits for the original
      EXPECT_FALSE(copy.has_value()) << "the copy must wait for the original's final write";
    };
    original = event::run_on(loop, service.handle(delivery, heartbeat));
    loop.run_until([&] { return copy.has_value(); });
    return *copy;
  }

  ManualClock clock;
  SequentialTokens tokens;
  FakeBank bank;
  FakeNotifier notifier;
  CopyObserver observer;
  RecordingHeartbeat heartbeat;
  RecordingHeartbeat copy_heartbeat;
  memory::InMemoryIdempotencyStore memory{std::chrono::hours(24)};
  FaultInjectingStore store{memory};
  event::EventLoop loop;
  application::LoopWaiter waiter{loop, clock};
  application::ChargeRecoveryService service{
      store,  bank,     notifier, clock,
      tokens, observer, waiter,   {.lease = 60s, .owner = "this-process"}};
  const domain::Charge charge = make_charge();
  bool copy_started = false;
  int claims = 0;
};

TEST_F(LocalSettlement, ACopyIsAckedTheMomentItsOriginalIsDone) {
  consumer::Disposition original;
  const consumer::Disposition copy = copy_during_original(original);
  EXPECT_TRUE(std::holds_alternative<consumer::Ack>(original));
  EXPECT_TRUE(std::holds_alternative<consumer::Ack>(copy)) << "not sent back to re-check";
  EXPECT_EQ(observer.settled, 1);
  EXPECT_EQ(bank.calls(), 1);
  EXPECT_EQ(claims, 1) << "the copy asked the store nothing";
  EXPECT_EQ(copy_heartbeat.starts, 1) << "the copy's visibility is kept while it waits";
  EXPECT_EQ(copy_heartbeat.stops, 1);
}

TEST_F(LocalSettlement, ACopyOfAPermanentlyRefusedDebitIsDeadLetteredAsPreviouslyFailed) {
  bank.script(charge.id.value(), {domain::DebitRejected{"ACCOUNT_CLOSED"}});
  consumer::Disposition original;
  const consumer::Disposition copy = copy_during_original(original);
  const auto* dead = std::get_if<consumer::DeadLetter>(&copy);
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(dead->reason, domain::dlq_reason::kPreviouslyFailed);
  EXPECT_NE(dead->detail.find("ACCOUNT_CLOSED"), std::string::npos) << dead->detail;
  EXPECT_EQ(observer.settled, 1);
  EXPECT_EQ(claims, 1);
}

TEST_F(LocalSettlement, ACopyOfAnOriginalThatGaveItsClaimBackComesBackSoonToClaimIt) {
  bank.script(charge.id.value(), {domain::DebitUnavailable{"503"}});
  consumer::Disposition original;
  const consumer::Disposition copy = copy_during_original(original);
  const auto* retry = std::get_if<consumer::RetryLater>(&copy);
  ASSERT_NE(retry, nullptr) << "nothing final was recorded: the copy must not ack";
  EXPECT_EQ(retry->after, application::kMinRecheck);
  EXPECT_EQ(observer.settled, 0);
  EXPECT_EQ(bank.calls(), 1) << "the copy does not debit right after the bank failed";
}

// The bank's answer waits until the test opens the gate, so the debit of whoever reaches it
// first is in flight while other tasks run.
class GatedBank final : public domain::ForwardingDebitPort {
 public:
  GatedBank(domain::AccountDebitPort& bank, event::EventLoop& loop)
      : ForwardingDebitPort(bank), gate_(loop) {}
  Task<domain::DebitResult> debit(const domain::Charge& charge, std::string_view key) override {
    while (!open_) co_await gate_.wait();
    co_return co_await ForwardingDebitPort::debit(charge, key);
  }
  void open() {
    open_ = true;
    gate_.notify_all();
  }

 private:
  event::WaitQueue gate_;
  bool open_ = false;
};

TEST_F(LocalSettlement, ACopyRefusedByAHolderThatStartedMeanwhileWaitsForItToo) {
  GatedBank gated(bank, loop);
  application::ChargeRecoveryService gated_service{
      store,  gated,    notifier, clock,
      tokens, observer, waiter,   {.lease = 60s, .owner = "this-process"}};
  const application::Delivery delivery{.charge = charge, .payload_hash = "hash-1"};
  std::optional<consumer::Disposition> original;
  std::optional<consumer::Disposition> copy;
  auto original_task = [&]() -> Task<void> {
    original = co_await gated_service.handle(delivery, heartbeat);
  };
  auto copy_task = [&]() -> Task<void> {
    copy = co_await gated_service.handle(delivery, copy_heartbeat);
  };
  // The copy looks first (no hold here yet) and sends its claim; the original claims while the
  // copy's claim is on its way, and its debit waits at the gate.
  store.before = [&](idempotency::StoreOperation operation) {
    if (operation != idempotency::StoreOperation::Claim) return;
    if (++claims == 1) spawn(original_task());
  };
  loop.post([&] { spawn(copy_task()); });
  loop.run_until([&] { return claims == 2 && !copy.has_value(); });
  loop.post([&] { gated.open(); });
  loop.run_until([&] { return original.has_value() && copy.has_value(); });
  EXPECT_TRUE(std::holds_alternative<consumer::Ack>(*original));
  EXPECT_TRUE(std::holds_alternative<consumer::Ack>(*copy)) << "settled, not sent to re-check";
  EXPECT_EQ(observer.settled, 1);
  EXPECT_EQ(claims, 2) << "one claim each, no re-check";
  EXPECT_EQ(bank.calls(), 1);
}

}  // namespace
}  // namespace ic::testing
