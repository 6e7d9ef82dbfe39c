// The application step between the queue and the domain: decode and validate the body, hash
// its canonical form, and hand the charge to the service. A body that fails validation never
// claims anything: it is dead-lettered as INVALID_MESSAGE with the field and rule as detail.
#pragma once

#include <string_view>

#include "domain/charge_recovery_service.hpp"
#include "idempotency/disposition.hpp"
#include "idempotency/lease_heartbeat.hpp"

namespace ic::application {

// Thread-safety: as the service it wraps (handle() runs on every worker concurrently).
class ChargeMessageHandler {
 public:
  explicit ChargeMessageHandler(charge::ChargeRecoveryService& service) : service_(service) {}

  [[nodiscard]] idem::Disposition handle(std::string_view body, int receive_count,
                                         idem::LeaseHeartbeat& heartbeat) const;

 private:
  charge::ChargeRecoveryService& service_;
};

}  // namespace ic::application
