// A copy delivered to another worker of the same process while its original is being debited
// is settled by the original's final write: no trip back through the queue, no re-check claim.
// The copy's claim is refused before the original may go on (the bank waits for it), and the
// copy learns the outcome whether it reaches its wait before or after the final write, so the
// result does not depend on thread timing (run with --gtest_repeat to see both orders).
#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

#include "application/charge_recovery_service.hpp"
#include "domain/charge_status.hpp"
#include "testing/fakes.hpp"
#include "testing/in_memory_store.hpp"

namespace ic::testing {
namespace {

using namespace std::chrono_literals;

class CopyObserver final : public application::ChargeObserver {
 public:
  void claim_decided(const domain::Charge&, const idempotency::ClaimResult& result) override {
    if (result.outcome != idempotency::ClaimOutcome::DuplicateInProgress) return;
    const std::scoped_lock lock(mutex_);
    refused_ = true;
    changed_.notify_all();
  }
  void copy_settled_locally(const domain::Charge&, Millis) override { ++settled; }
  // The copy's claim was refused (true), or 10 s passed (false).
  bool wait_for_refusal() {
    std::unique_lock lock(mutex_);
    return changed_.wait_for(lock, 10s, [&] { return refused_; });
  }
  std::atomic<int> settled{0};

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  bool refused_ = false;
};

class LocalSettlement : public ::testing::Test {
 protected:
  // Delivers the original; while its debit is about to be sent, a copy arrives on another
  // worker. Returns the copy's disposition.
  consumer::Disposition copy_during_original(consumer::Disposition& original) {
    consumer::Disposition copy;
    std::thread worker;
    bank.before_debit = [&](const domain::Charge&) {
      if (worker.joinable()) return;  // the original's debit only
      worker = std::thread([&] {
        copy = service.handle({.charge = charge, .payload_hash = "hash-1"}, copy_heartbeat);
      });
      EXPECT_TRUE(observer.wait_for_refusal()) << "the copy's claim was never refused";
    };
    original = service.handle({.charge = charge, .payload_hash = "hash-1"}, heartbeat);
    worker.join();
    return copy;
  }

  ManualClock clock;
  SequentialTokens tokens;
  FakeBank bank;
  FakeNotifier notifier;
  CopyObserver observer;
  RecordingHeartbeat heartbeat;
  RecordingHeartbeat copy_heartbeat;
  memory::InMemoryIdempotencyStore memory{std::chrono::hours(24)};
  application::ChargeRecoveryService service{
      memory, bank, notifier, clock, tokens, observer, {.lease = 60s, .owner = "this-process"}};
  const domain::Charge charge = make_charge();
};

TEST_F(LocalSettlement, ACopyIsAckedTheMomentItsOriginalIsDone) {
  consumer::Disposition original;
  const consumer::Disposition copy = copy_during_original(original);
  EXPECT_TRUE(std::holds_alternative<consumer::Ack>(original));
  EXPECT_TRUE(std::holds_alternative<consumer::Ack>(copy)) << "not sent back to re-check";
  EXPECT_EQ(observer.settled, 1);
  EXPECT_EQ(bank.calls(), 1);
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
}

TEST_F(LocalSettlement, ACopyOfAnOriginalThatGaveItsClaimBackComesBackSoonToClaimIt) {
  bank.script(charge.id.value(), {domain::DebitUnavailable{"503"}});
  consumer::Disposition original;
  const consumer::Disposition copy = copy_during_original(original);
  const auto* retry = std::get_if<consumer::RetryLater>(&copy);
  ASSERT_NE(retry, nullptr) << "nothing final was recorded: the copy must not ack";
  EXPECT_EQ(retry->after, application::kMinRecheck);
  EXPECT_EQ(observer.settled, 0);
}

}  // namespace
}  // namespace ic::testing
