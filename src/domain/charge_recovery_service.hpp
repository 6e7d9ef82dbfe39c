// ChargeRecoveryService: one delivery of a charge in, one disposition out (DESIGN.md §3).
// Claim the chargeId, and only as the claim holder debit, notify and record the result.
//
//   ChargeRecoveryService service(store, bank, notifier, clock, tokens, observer, config);
//   idem::Disposition d = service.handle({.charge = c, .payload_hash = h, .receive_count = 1},
//                                        heartbeat);
#pragma once

#include <string>
#include <string_view>

#include "domain/charge.hpp"
#include "domain/charge_observer.hpp"
#include "domain/ports.hpp"
#include "idempotency/disposition.hpp"
#include "idempotency/idempotency_store.hpp"
#include "idempotency/lease_heartbeat.hpp"

namespace ic::charge {

struct ServiceConfig {
  idem::Millis lease{60'000};
  std::string owner;       // this worker's identity, recorded on each claim
  std::string key_prefix;  // prepended to chargeId to form the table key
  // Backoff for transient failures grows with the delivery's receive count, up to the cap.
  idem::Millis retry_base{2'000};
  idem::Millis retry_cap{300'000};
  // A fenced completion comes back soon: the redelivery will find the other holder's state.
  idem::Millis fenced_retry{1'000};
};

struct Delivery {
  const Charge& charge;
  std::string_view payload_hash;
  int receive_count = 1;  // SQS ApproximateReceiveCount, 1 on first delivery
};

// Thread-safety: handle() may run concurrently on many threads; the service holds no mutable
// state of its own. Ownership: every port is borrowed and must outlive the service.
class ChargeRecoveryService {
 public:
  ChargeRecoveryService(idem::IdempotencyStore& store, AccountDebitPort& bank,
                        NotificationPort& notifier, const idem::Clock& clock, TokenSource& tokens,
                        ChargeObserver& observer, ServiceConfig config);

  [[nodiscard]] idem::Disposition handle(const Delivery& delivery, idem::LeaseHeartbeat& heartbeat);

  [[nodiscard]] idem::Millis transient_backoff(int receive_count) const;

 private:
  struct Claim {
    const Charge& charge;
    std::string key;
    std::string token;
  };

  idem::Disposition on_refusal(const Delivery& delivery, const idem::ClaimResult& result) const;
  idem::Disposition run_effect(const Delivery& delivery, const Claim& claim,
                               idem::LeaseHeartbeat& heartbeat);
  NotificationResult notify(const Claim& claim, const Debited& debited);
  idem::Disposition record_debit(const Claim& claim, const Debited& debited,
                                 const NotificationResult& notified);
  idem::Disposition record_rejection(const Claim& claim, const DebitRejected& rejected);
  idem::Disposition give_back(const Delivery& delivery, const Claim& claim);
  // Maps the outcome of complete/fail: written → `on_written`, fenced or failed → no ack.
  idem::Disposition after_final_write(const Claim& claim, std::string_view operation,
                                      const std::expected<idem::WriteOutcome, idem::StoreError>&,
                                      idem::Disposition on_written);

  idem::IdempotencyStore& store_;
  AccountDebitPort& bank_;
  NotificationPort& notifier_;
  const idem::Clock& clock_;
  TokenSource& tokens_;
  ChargeObserver& observer_;
  const ServiceConfig config_;
};

}  // namespace ic::charge
