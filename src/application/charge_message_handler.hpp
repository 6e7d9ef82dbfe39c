// The application step between the queue and the domain: decode and validate the body, hash
// its canonical form, and hand the charge to the service. A body that fails validation never
// claims anything: it is dead-lettered as INVALID_MESSAGE with the field and rule as detail.
#pragma once

#include <string_view>

#include "application/charge_recovery_service.hpp"
#include "consumer/disposition.hpp"
#include "consumer/lease_heartbeat.hpp"

namespace ic::application {

// Thread-safety: as the service it wraps (handle() tasks on the consumer's loop, many at once).
class ChargeMessageHandler {
 public:
  explicit ChargeMessageHandler(ChargeRecoveryService& service) : service_(service) {}

  [[nodiscard]] Task<consumer::Disposition> handle(std::string_view body, int receive_count,
                                                   consumer::LeaseHeartbeat& heartbeat) const;

 private:
  ChargeRecoveryService& service_;
};

}  // namespace ic::application
