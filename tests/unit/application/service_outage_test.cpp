// The service behind its circuits (docs/design.md §3, "Dependency outages"): what opens a
// circuit, what a message finding it open gets (nothing touched, RetryLater circuit_open), how
// the probe's message is held across failed probes, Retry-After, and the notify fast-fail.
#include <gmock/gmock.h>

#include "application/charge_recovery_service.hpp"
#include "domain/charge_status.hpp"
#include "testing/advancing_waiter.hpp"
#include "testing/fixed_random.hpp"
#include "testing/service_fixture.hpp"

namespace ic::testing {
namespace {

using application::Dependency;
using application::DependencyCircuits;
using consumer::RetryLater;

class ServiceOutageTest : public ServiceFixture {
 protected:
  ServiceOutageTest() {
    store.before = [this](idempotency::StoreOperation operation) {
      if (operation == idempotency::StoreOperation::Claim) ++claims;
    };
  }

  static domain::DebitResult unavailable(std::optional<Millis> retry_after = std::nullopt) {
    return domain::DebitUnavailable{.detail = "HTTP 503", .retry_after = retry_after};
  }
  RetryLater retry_of(const consumer::Disposition& d) {
    const auto* retry = std::get_if<RetryLater>(&d);
    EXPECT_NE(retry, nullptr) << "expected RetryLater, variant index " << d.index();
    return retry ? *retry : RetryLater{};
  }
  // Two failed debits of two charges: the debit circuit (window 4, min 2, 50 %) opens.
  void open_debit() {
    for (const char* id : {"CHG-20261130-000901", "CHG-20261130-000902"}) {
      bank.script(id, {unavailable()});
      EXPECT_EQ(retry_of(deliver(make_charge(id))).reason, "debit_unavailable");
    }
    ASSERT_EQ(circuits.circuit(Dependency::Debit).state(), CircuitState::Open);
  }
  void open_store() {
    store.inject(idempotency::StoreOperation::Claim, FaultInjectingStore::Fault::FailBeforeWrite,
                 2);
    for (const char* id : {"CHG-20261130-000901", "CHG-20261130-000902"}) {
      EXPECT_EQ(retry_of(deliver(make_charge(id))).reason, "store_unavailable");
    }
    ASSERT_EQ(circuits.circuit(Dependency::Store).state(), CircuitState::Open);
  }

  FixedRandom random{1.0};
  AdvancingWaiter waiter{clock};
  DependencyCircuits circuits{
      {.window = 4, .min_calls = 2, .failure_percent = 50, .probe_min = 1s, .probe_max = 8s},
      clock,
      random,
      waiter};
  application::ChargeRecoveryService guarded{
      store,    bank,     notifier, clock,
      tokens,   observer, waiter,   {.lease = kLease, .owner = "test-worker"},
      &circuits};
  int claims = 0;

  consumer::Disposition deliver(const domain::Charge& c, int receive_count = 1) {
    const application::Delivery delivery{
        .charge = c, .payload_hash = "hash-1", .receive_count = receive_count};
    return event::run_on(loop, guarded.handle(delivery, heartbeat));
  }
};

TEST_F(ServiceOutageTest, AMessageFindingTheDebitCircuitOpenTouchesNeitherBankNorStore) {
  open_debit();
  const int bank_calls = bank.calls();
  const int claims_before = claims;
  const RetryLater parked = retry_of(deliver(charge));
  EXPECT_EQ(parked.reason, "circuit_open");
  EXPECT_GE(parked.after, 1s) << "not back before the first probe";
  EXPECT_EQ(bank.calls(), bank_calls);
  EXPECT_EQ(claims, claims_before);
}

TEST_F(ServiceOutageTest, TheFailedDebitThatOpensTheCircuitComesBackWithTheProbeSchedule) {
  bank.script("CHG-20261130-000901", {unavailable()});
  EXPECT_EQ(retry_of(deliver(make_charge("CHG-20261130-000901"))).after,
            guarded.transient_backoff(1));
  bank.script("CHG-20261130-000902", {unavailable()});
  const RetryLater opening = retry_of(deliver(make_charge("CHG-20261130-000902"), 9));
  EXPECT_EQ(opening.after, guarded.transient_backoff(9)) << "the longer of the two";
  bank.script("CHG-20261130-000903", {unavailable()});
  (void)deliver(make_charge("CHG-20261130-000903"));  // parked: the circuit is open
  clock.advance(1s);
  bank.script(charge.id.value(), {unavailable()});
  waiter.request_stop();  // the probe fails and is given back at once
  EXPECT_GE(retry_of(deliver(charge)).after, circuits.park_delay(Dependency::Debit));
}

TEST_F(ServiceOutageTest, RejectionsAndMisconfigurationNeverOpenTheDebitCircuit) {
  for (int i = 0; i < 6; ++i) {
    const std::string id = "CHG-20261130-00099" + std::to_string(i);
    bank.script(id, {i % 2 == 0 ? domain::DebitResult{domain::DebitRejected{"ACCOUNT_CLOSED"}}
                                : domain::DebitResult{domain::DebitMisconfigured{"HTTP 400"}}});
    (void)deliver(make_charge(id));
  }
  EXPECT_EQ(circuits.circuit(Dependency::Debit).state(), CircuitState::Closed);
}

TEST_F(ServiceOutageTest, TheProbesMessageIsHeldWithItsClaimAcrossFailedProbes) {
  open_debit();
  const int starts_before = heartbeat.starts;
  clock.advance(1s);
  bank.script(charge.id.value(), {unavailable(), unavailable(), unavailable()});
  const Instant first_probe = clock.now();
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(bank.calls_for(charge.id.value()), 4) << "three failed probes, then the debit";
  EXPECT_EQ(record().status, "DEBITED");
  EXPECT_EQ(heartbeat.starts - starts_before, 1) << "one claim, kept alive throughout";
  // Doubling delays (the fixed random puts equal jitter at its top): 2 s, 4 s, 8 s.
  std::vector<Millis> waited;
  for (const Instant at : waiter.waits()) waited.push_back(at - first_probe);
  EXPECT_EQ(waited, (std::vector<Millis>{2s, 6s, 14s}));
  EXPECT_EQ(circuits.circuit(Dependency::Debit).state(), CircuitState::Closed);
}

TEST_F(ServiceOutageTest, WhileTheProbeIsHeldOtherMessagesAreParked) {
  open_debit();
  clock.advance(1s);
  consumer::Disposition other;
  bank.script(charge.id.value(), {unavailable()});
  bank.before_debit = [&](const domain::Charge& c) {
    if (c.id.value() != charge.id.value()) return;
    bank.before_debit = nullptr;
    other = deliver(make_charge("CHG-20261130-000777"));
  };
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(retry_of(other).reason, "circuit_open");
  EXPECT_EQ(bank.calls_for("CHG-20261130-000777"), 0);
}

TEST_F(ServiceOutageTest, AStopWhileHoldingGivesTheMessageBackOnTheProbeSchedule) {
  open_debit();
  clock.advance(1s);
  bank.script(charge.id.value(), {unavailable()});
  waiter.request_stop();
  const RetryLater back = retry_of(deliver(charge));
  EXPECT_EQ(back.reason, "circuit_open");
  EXPECT_GE(back.after, 1s);
  EXPECT_EQ(bank.calls_for(charge.id.value()), 1);
  EXPECT_FALSE(heartbeat.running());
  EXPECT_FALSE(circuits.circuit(Dependency::Debit).snapshot().probe_reserved)
      << "the turn is free for the next process or message";
}

TEST_F(ServiceOutageTest, RetryAfterHoldsEveryDebitOfTheProcessBack) {
  bank.script(charge.id.value(), {unavailable(6s)});
  EXPECT_GE(retry_of(deliver(charge)).after, 6s);
  const domain::Charge other = make_charge("CHG-20261130-000555");
  clock.advance(2s);
  const RetryLater held = retry_of(deliver(other));
  EXPECT_EQ(held.after, 4s) << "the rest of the bank's pause";
  EXPECT_EQ(bank.calls_for(other.id.value()), 0);
  clock.advance(4s);
  EXPECT_TRUE(is_ack(deliver(other)));
}

TEST_F(ServiceOutageTest, AnOpenNotifyCircuitRecordsDebitedNotificationFailedWithoutCalling) {
  notifier.fail_all();
  for (const char* id : {"CHG-20261130-000901", "CHG-20261130-000902"}) {
    EXPECT_TRUE(is_ack(deliver(make_charge(id))));
  }
  ASSERT_EQ(circuits.circuit(Dependency::Notify).state(), CircuitState::Open);
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(notifier.keys().size(), 2u) << "not attempted while open";
  EXPECT_EQ(bank.calls_for(charge.id.value()), 1) << "debits go on";
  EXPECT_EQ(record().status, "DEBITED_NOTIFICATION_FAILED");
  EXPECT_EQ(circuits.circuit(Dependency::Debit).state(), CircuitState::Closed);
}

TEST_F(ServiceOutageTest, TheNotifyCircuitLetsOneRealNotificationThroughWhenHalfOpen) {
  notifier.fail_all();
  for (const char* id : {"CHG-20261130-000901", "CHG-20261130-000902"}) {
    (void)deliver(make_charge(id));
  }
  clock.advance(1s);
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(notifier.keys().size(), 3u) << "the probe";
  EXPECT_EQ(circuits.circuit(Dependency::Notify).state(), CircuitState::Open);
}

TEST_F(ServiceOutageTest, AStoreOutageOpensTheStoreCircuitAndParksWithoutClaiming) {
  open_store();
  const int claims_before = claims;
  const RetryLater parked = retry_of(deliver(charge));
  EXPECT_EQ(parked.reason, "circuit_open");
  EXPECT_EQ(claims, claims_before);
  EXPECT_EQ(bank.calls(), 0);
}

TEST_F(ServiceOutageTest, TheStoreProbesMessageIsHeldByItsVisibilityAlone) {
  open_store();
  const int starts_before = heartbeat.starts;
  clock.advance(1s);
  store.inject(idempotency::StoreOperation::Claim, FaultInjectingStore::Fault::FailBeforeWrite, 2);
  EXPECT_TRUE(is_ack(deliver(charge)));
  EXPECT_EQ(record().status, "DEBITED");
  EXPECT_EQ(waiter.waits().size(), 2u) << "two failed probes, each waited out";
  EXPECT_EQ(heartbeat.starts - starts_before, 2)
      << "the visibility-only heartbeat, then the claim's";
  EXPECT_EQ(circuits.circuit(Dependency::Store).state(), CircuitState::Closed);
}

TEST_F(ServiceOutageTest, WithoutCircuitsNothingChanges) {
  bank.script(charge.id.value(), {unavailable(), unavailable(), unavailable()});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(retry_of(ServiceFixture::deliver(charge)).reason, "debit_unavailable");
  }
  EXPECT_TRUE(is_ack(ServiceFixture::deliver(charge)));
}

}  // namespace
}  // namespace ic::testing
