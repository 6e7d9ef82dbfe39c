// A ChargeRecoveryService wired to the in-memory store and plain fakes, with a manual clock.
// deliver() runs a delivery on the fixture's event loop, as the consumer runs it on its loop;
// deliver_elsewhere() runs one on another process's service (its own claims, the same store and
// bank), which is also what a test calls from inside a delivery (a bank hook, say): the loop of
// this process is busy there, as a real consumer's is never stopped inside a task.
#pragma once

#include <gtest/gtest.h>

#include <atomic>
#include <variant>
#include <vector>

#include "application/charge_recovery_service.hpp"
#include "application/hold_waiter.hpp"
#include "core/thread_annotations.hpp"
#include "event/run_blocking.hpp"
#include "testing/advancing_waiter.hpp"
#include "testing/fakes.hpp"
#include "testing/fault_injecting_store.hpp"
#include "testing/in_memory_store.hpp"

namespace ic::testing {

class CountingObserver final : public application::ChargeObserver {
 public:
  void fenced(const domain::Charge&, idempotency::StoreOperation, std::string_view) override {
    ++fenced_count;
  }
  void store_failed(const domain::Charge&, idempotency::StoreOperation, const Error&) override {
    ++store_failures;
  }
  void charge_finished(const domain::Charge&, const application::ChargeSteps& steps,
                       const consumer::Disposition&) override {
    MutexLock lock(mutex_);
    finished_.push_back(steps);
  }
  // Every delivery's summary so far, in the order they ended.
  std::vector<application::ChargeSteps> finished() const {
    MutexLock lock(mutex_);
    return finished_;
  }
  std::atomic<int> fenced_count{0};
  std::atomic<int> store_failures{0};

 private:
  mutable Mutex mutex_;
  std::vector<application::ChargeSteps> finished_ GUARDED_BY(mutex_);
};

class ServiceFixture : public ::testing::Test {
 protected:
  static constexpr Millis kLease = 60s;

  application::ChargeRecoveryService make_service(idempotency::IdempotencyStore& target,
                                                  application::HoldWaiter& hold_waiter) {
    return application::ChargeRecoveryService(target, bank, notifier, clock, tokens, observer,
                                              hold_waiter,
                                              {.lease = kLease, .owner = "test-worker"});
  }
  consumer::Disposition deliver(const domain::Charge& c, const std::string& hash = "hash-1",
                                int receive_count = 1) {
    const application::Delivery delivery{
        .charge = c, .payload_hash = hash, .receive_count = receive_count};
    return event::run_on(loop, service.handle(delivery, heartbeat));
  }
  consumer::Disposition deliver_elsewhere(const domain::Charge& c,
                                          const std::string& hash = "hash-1",
                                          int receive_count = 1) {
    const application::Delivery delivery{
        .charge = c, .payload_hash = hash, .receive_count = receive_count};
    NoHeartbeat no_heartbeat;
    return event::run_blocking(elsewhere.handle(delivery, no_heartbeat));
  }
  idempotency::ClaimRecord record(const std::string& key = "CHG-20261130-000123") {
    auto r = event::run_blocking(memory.get(key));
    EXPECT_TRUE(r.has_value() && r->has_value()) << "no record for " << key;
    return r.has_value() && r->has_value() ? **r : idempotency::ClaimRecord{};
  }

  ManualClock clock;
  SequentialTokens tokens;
  FakeBank bank;
  FakeNotifier notifier;
  CountingObserver observer;
  RecordingHeartbeat heartbeat;
  memory::InMemoryIdempotencyStore memory{std::chrono::hours(24 * 30)};
  FaultInjectingStore store{memory};
  event::EventLoop loop;
  application::LoopWaiter waiter{loop, clock};
  application::ChargeRecoveryService service = make_service(store, waiter);
  AdvancingWaiter elsewhere_waiter{clock};  // never waited on: that process holds no copy
  application::ChargeRecoveryService elsewhere = make_service(store, elsewhere_waiter);
  const domain::Charge charge = make_charge();
};

inline bool is_ack(const consumer::Disposition& d) {
  return std::holds_alternative<consumer::Ack>(d);
}

}  // namespace ic::testing
