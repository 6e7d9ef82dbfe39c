#include "adapters/bank_http/core_banking_client.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "adapters/bank_http/bank_call.hpp"

namespace ic::bank {
namespace {

// debitRef is stored in the idempotency record and logged: accept only an identifier.
bool is_debit_id(std::string_view text) {
  return !text.empty() && text.size() <= 128 &&
         std::ranges::all_of(text, charge::rules::is_identifier_char);
}

std::string debit_body(const charge::Charge& charge) {
  const nlohmann::json body = {
      {"chargeId", charge.id.value()},
      {"accountId", charge.account.value()},
      {"amountMinor", charge.amount.amount_minor()},
      {"currency", charge.amount.currency().code()},
      {"chargeType", charge.type.value()},
  };
  return body.dump();
}

bool transient_status(long status) {
  return status >= 500 || status == 408 || status == 429;
}

charge::DebitResult map_reply(const http::HttpResponse& reply, const charge::Charge& charge,
                              const Clock& clock) {
  const long status = reply.status;
  if (status == 200 || status == 201) {
    if (auto id = json_string_field(reply.body, "debitId", is_debit_id)) {
      return charge::Debited{.debit_ref = std::move(*id), .replayed = status == 200};
    }
    return charge::DebitUnavailable{"bank answered " + describe(reply, charge.account) +
                                    " without a valid debitId; outcome unknown"};
  }
  if (status == 409) return charge::DebitRejected{"IDEMPOTENCY_KEY_CONFLICT"};
  if (status == 422) {
    return charge::DebitRejected{
        json_string_field(reply.body, "code", is_machine_code).value_or("UNPROCESSABLE")};
  }
  if (transient_status(status)) {
    return charge::DebitUnavailable{
        .detail = "bank unavailable: " + describe(reply, charge.account),
        .retry_after = retry_after(reply, clock)};
  }
  if (status >= 200 && status < 300) {
    return charge::DebitUnavailable{"bank answered an unexpected success " +
                                    describe(reply, charge.account) + "; outcome unknown"};
  }
  return charge::DebitMisconfigured{"bank answered " + describe(reply, charge.account)};
}

}  // namespace

CoreBankingClient::CoreBankingClient(http::HttpTransport& transport, BankEndpoint endpoint,
                                     BearerTokenFile* token, const Clock& clock)
    : transport_(transport), endpoint_(std::move(endpoint)), token_(token), clock_(clock) {}

charge::DebitResult CoreBankingClient::debit(const charge::Charge& charge,
                                             std::string_view idempotency_key) {
  if (!valid_idempotency_key(idempotency_key)) {
    return charge::DebitMisconfigured{"invalid idempotency key, not sent"};
  }
  const auto reply =
      post_json(transport_, endpoint_, token_, "/v1/debits", idempotency_key, debit_body(charge));
  if (!reply && reply.error().misconfigured) {
    return charge::DebitMisconfigured{"bank call not possible: " + reply.error().detail};
  }
  if (!reply) return charge::DebitUnavailable{"bank " + reply.error().detail};
  return map_reply(*reply, charge, clock_);
}

}  // namespace ic::bank
