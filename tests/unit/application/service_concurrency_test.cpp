// Many deliveries in flight at once, one store: the claim must admit exactly one effect per
// chargeId. The deliveries are tasks of one loop, as in the consumer, and every store call
// yields to the loop first, so their claims, debits and final writes interleave.
#include <gtest/gtest.h>

#include <vector>

#include "idempotency/forwarding_store.hpp"
#include "testing/service_fixture.hpp"

namespace ic::testing {
namespace {

// Lets every other ready task run before the call goes on.
struct YieldToLoop {
  event::EventLoop& loop;
  bool await_ready() const noexcept { return false; }
  void await_suspend(std::coroutine_handle<> handle) const {
    loop.resume_soon(Resumable::capture(handle));
  }
  void await_resume() const noexcept {}
};

class YieldingStore final : public idempotency::ForwardingStore {
 public:
  YieldingStore(idempotency::IdempotencyStore& target, event::EventLoop& loop)
      : ForwardingStore(target), loop_(loop) {}
  Task<idempotency::ClaimReply> claim(const idempotency::ClaimRequest& request) override {
    co_await YieldToLoop{loop_};
    co_return co_await ForwardingStore::claim(request);
  }
  Task<idempotency::WriteReply> complete(std::string_view key, std::string_view token,
                                         const idempotency::Completion& completion,
                                         Instant now) override {
    co_await YieldToLoop{loop_};
    co_return co_await ForwardingStore::complete(key, token, completion, now);
  }

 private:
  event::EventLoop& loop_;
};

class ServiceConcurrency : public ServiceFixture {
 protected:
  // Runs every delivery as a task of the loop at once; each copy that is not acked comes back
  // (as its redelivery would) until it is. Returns how many were acked at the first try.
  int deliver_all(const std::vector<domain::Charge>& copies) {
    int finished = 0;
    int acked_first_time = 0;
    auto one = [&](const domain::Charge& c) -> Task<void> {
      NoHeartbeat no_heartbeat;
      const application::Delivery delivery{.charge = c, .payload_hash = "h"};
      bool first = true;
      while (true) {
        const consumer::Disposition d = co_await interleaved.handle(delivery, no_heartbeat);
        if (is_ack(d)) break;
        first = false;
        co_await YieldToLoop{loop};
      }
      if (first) ++acked_first_time;
      ++finished;
    };
    loop.post([&] {
      for (const auto& c : copies) spawn(one(c));
    });
    loop.run_until([&] { return finished == static_cast<int>(copies.size()); });
    return acked_first_time;
  }

  YieldingStore yielding{store, loop};
  application::ChargeRecoveryService interleaved = make_service(yielding, waiter);
};

TEST_F(ServiceConcurrency, FiftyCopiesOfOneChargeInFlightAtOnceDebitOnce) {
  const std::vector<domain::Charge> copies(50, charge);
  const int acked_first_time = deliver_all(copies);
  EXPECT_EQ(bank.calls(), 1);
  EXPECT_EQ(record().state, idempotency::ClaimState::Done);
  EXPECT_EQ(acked_first_time, 50) << "every copy settled by the holder, none sent to re-check";
}

TEST_F(ServiceConcurrency, ThousandChargesTimesFourCopiesInFlightDebitEachOnce) {
  constexpr int kCharges = 1000, kCopies = 4;
  std::vector<domain::Charge> copies;
  for (int i = 0; i < kCharges; ++i) {
    // Copies of one charge are adjacent, so their claims race on the same key.
    for (int k = 0; k < kCopies; ++k) copies.push_back(make_charge("CHG-" + std::to_string(i)));
  }
  (void)deliver_all(copies);
  EXPECT_EQ(bank.calls(), kCharges);
  EXPECT_EQ(bank.money_movements(), static_cast<std::size_t>(kCharges));
  for (int i = 0; i < kCharges; ++i) {
    ASSERT_EQ(record("CHG-" + std::to_string(i)).state, idempotency::ClaimState::Done);
  }
}

}  // namespace
}  // namespace ic::testing
