// Many workers, one store: the claim must admit exactly one effect per chargeId. Run under
// TSan in CI, which also checks the fakes and the store for data races.
#include <gtest/gtest.h>

#include <barrier>
#include <thread>
#include <vector>

#include "testing/service_fixture.hpp"

namespace ic::testing {
namespace {

using ServiceConcurrency = ServiceFixture;

TEST_F(ServiceConcurrency, FiftyThreadsDeliveringOneChargeDebitOnce) {
  constexpr int kThreads = 50;
  std::barrier start(kThreads);
  std::atomic<int> acked{0}, deferred{0};
  std::vector<std::jthread> workers;
  for (int i = 0; i < kThreads; ++i) {
    workers.emplace_back([&] {
      NoHeartbeat no_heartbeat;
      start.arrive_and_wait();
      const consumer::Disposition d =
          service.handle({.charge = charge, .payload_hash = "hash-1"}, no_heartbeat);
      (is_ack(d) ? acked : deferred) += 1;
    });
  }
  workers.clear();
  EXPECT_EQ(bank.calls(), 1);
  EXPECT_EQ(record().state, idempotency::ClaimState::Done);
  EXPECT_GE(acked, 1);
  EXPECT_EQ(acked + deferred, kThreads) << "every copy got a definite answer";
}

TEST_F(ServiceConcurrency, ThousandChargesTimesFourCopiesOnSixteenThreadsDebitEachOnce) {
  constexpr int kCharges = 1000, kCopies = 4, kThreads = 16;
  std::vector<domain::Charge> charges;
  for (int i = 0; i < kCharges; ++i) charges.push_back(make_charge("CHG-" + std::to_string(i)));
  std::atomic<int> next{0};
  std::vector<std::jthread> workers;
  for (int t = 0; t < kThreads; ++t) {
    workers.emplace_back([&] {
      NoHeartbeat no_heartbeat;
      // Copies of one charge are adjacent, so several threads race on the same key.
      for (int i = next++; i < kCharges * kCopies; i = next++) {
        const domain::Charge& c = charges[static_cast<std::size_t>(i / kCopies)];
        // A deferred copy (its twin held the lease) comes back until the charge is final.
        while (!is_ack(service.handle({.charge = c, .payload_hash = "h"}, no_heartbeat))) {
          std::this_thread::yield();
        }
      }
    });
  }
  workers.clear();
  EXPECT_EQ(bank.calls(), kCharges);
  EXPECT_EQ(bank.money_movements(), static_cast<std::size_t>(kCharges));
  for (const auto& c : charges)
    ASSERT_EQ(record(c.id.value()).state, idempotency::ClaimState::Done);
}

}  // namespace
}  // namespace ic::testing
