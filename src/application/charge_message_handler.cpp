#include "application/charge_message_handler.hpp"

#include "application/charge_event_decoder.hpp"
#include "application/payload_hash.hpp"
#include "domain/charge_status.hpp"

namespace ic::application {

Task<consumer::Disposition> ChargeMessageHandler::handle(
    std::string_view body, int receive_count, consumer::LeaseHeartbeat& heartbeat) const {
  auto decoded = decode_charge_due_event(body);
  if (!decoded) {
    auto id = parseable_charge_id(body);
    co_return consumer::DeadLetter{std::string(domain::dlq_reason::kInvalidMessage),
                                   decoded.error().detail(), id ? id->value() : std::string{}};
  }
  const std::string hash = payload_hash(*decoded);
  const Delivery delivery{.charge = *decoded, .payload_hash = hash, .receive_count = receive_count};
  co_return co_await service_.handle(delivery, heartbeat);
}

}  // namespace ic::application
