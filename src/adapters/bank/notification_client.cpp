#include "adapters/bank/notification_client.hpp"

#include <nlohmann/json.hpp>

#include "adapters/bank/bank_call.hpp"

namespace ic::bank {
namespace {

std::string notification_body(const domain::Charge& charge, std::string_view debit_ref) {
  const nlohmann::json body = {
      {"chargeId", charge.id.value()},
      {"accountId", charge.account.value()},
      {"debitId", debit_ref},
      {"amountMinor", charge.amount.amount_minor()},
      {"currency", charge.amount.currency().code()},
      {"chargeType", charge.type.value()},
  };
  // debit_ref is whatever the caller passes: replace invalid UTF-8 rather than throw.
  return body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

domain::NotificationResult map_reply(const http::HttpResponse& reply, const domain::Charge& charge,
                                     const Clock& clock) {
  if (reply.status >= 200 && reply.status < 300) return domain::NotificationSent{};
  // A 4xx other than 408/429 is an answer (the service is up and refused): not transient.
  const long status = reply.status;
  const bool transient = status >= 500 || status == 408 || status == 429 || status < 200;
  return domain::NotificationFailed{
      .detail = "notification service answered " + describe(reply, charge.account),
      .transient = transient,
      .retry_after = retry_after(reply, clock)};
}

}  // namespace

NotificationClient::NotificationClient(http::AsyncHttpTransport& transport, BankEndpoint endpoint,
                                       BearerTokenFile* token, const Clock& clock)
    : transport_(transport), endpoint_(std::move(endpoint)), token_(token), clock_(clock) {}

Task<domain::NotificationResult> NotificationClient::notify(const domain::Charge& charge,
                                                            std::string_view debit_ref,
                                                            std::string_view idempotency_key) {
  if (!valid_idempotency_key(idempotency_key)) {
    co_return domain::NotificationFailed{"invalid idempotency key, not sent"};
  }
  const auto reply = co_await post_json(transport_, endpoint_, token_, "/v1/notifications",
                                        idempotency_key, notification_body(charge, debit_ref));
  if (!reply) {
    co_return domain::NotificationFailed{"notification service " + reply.error().detail};
  }
  co_return map_reply(*reply, charge, clock_);
}

}  // namespace ic::bank
