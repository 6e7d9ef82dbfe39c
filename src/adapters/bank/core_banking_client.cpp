#include "adapters/bank/core_banking_client.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "adapters/bank/bank_call.hpp"

namespace ic::bank {
namespace {

// debitRef is stored in the idempotency record and logged: accept only an identifier.
bool is_debit_id(std::string_view text) {
  return !text.empty() && text.size() <= 128 &&
         std::ranges::all_of(text, domain::rules::is_identifier_char);
}

std::string debit_body(const domain::Charge& charge) {
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

domain::DebitResult map_reply(const http::HttpResponse& reply, const domain::Charge& charge,
                              const Clock& clock) {
  const long status = reply.status;
  if (status == 200 || status == 201) {
    if (auto id = json_string_field(reply.body, "debitId", is_debit_id)) {
      return domain::Debited{.debit_ref = std::move(*id), .replayed = status == 200};
    }
    return domain::DebitUnavailable{"bank answered " + describe(reply, charge.account) +
                                    " without a valid debitId; outcome unknown"};
  }
  if (status == 409) return domain::DebitRejected{"IDEMPOTENCY_KEY_CONFLICT"};
  if (status == 422) {
    return domain::DebitRejected{
        json_string_field(reply.body, "code", is_machine_code).value_or("UNPROCESSABLE")};
  }
  if (transient_status(status)) {
    return domain::DebitUnavailable{
        .detail = "bank unavailable: " + describe(reply, charge.account),
        .retry_after = retry_after(reply, clock)};
  }
  if (status >= 200 && status < 300) {
    return domain::DebitUnavailable{"bank answered an unexpected success " +
                                    describe(reply, charge.account) + "; outcome unknown"};
  }
  return domain::DebitMisconfigured{"bank answered " + describe(reply, charge.account)};
}

domain::InquiryResult map_inquiry(const http::HttpResponse& reply) {
  if (reply.status == 200) {
    if (auto id = json_string_field(reply.body, "debitId", is_debit_id)) {
      return domain::DebitFound{std::move(*id)};
    }
    return domain::InquiryFailed{"bank answered HTTP 200 without a valid debitId"};
  }
  if (reply.status == 404) return domain::DebitNotFound{};
  std::string detail = "bank answered HTTP " + std::to_string(reply.status);
  if (auto code = json_string_field(reply.body, "code", is_machine_code)) detail += " " + *code;
  return domain::InquiryFailed{std::move(detail)};
}

}  // namespace

CoreBankingClient::CoreBankingClient(http::AsyncHttpTransport& transport, BankEndpoint endpoint,
                                     BearerTokenFile* token, const Clock& clock)
    : transport_(transport), endpoint_(std::move(endpoint)), token_(token), clock_(clock) {}

Task<domain::DebitResult> CoreBankingClient::debit(const domain::Charge& charge,
                                                   std::string_view idempotency_key) {
  if (!valid_idempotency_key(idempotency_key)) {
    co_return domain::DebitMisconfigured{"invalid idempotency key, not sent"};
  }
  const auto reply = co_await post_json(transport_, endpoint_, token_, "/v1/debits",
                                        idempotency_key, debit_body(charge));
  if (!reply && reply.error().misconfigured) {
    co_return domain::DebitMisconfigured{"bank call not possible: " + reply.error().detail};
  }
  if (!reply) co_return domain::DebitUnavailable{"bank " + reply.error().detail};
  co_return map_reply(*reply, charge, clock_);
}

Task<domain::InquiryResult> CoreBankingClient::find_debit(std::string_view idempotency_key) {
  // The key is the path's last segment: its alphabet needs no escaping.
  if (!valid_idempotency_key(idempotency_key)) {
    co_return domain::InquiryFailed{"invalid idempotency key, not sent"};
  }
  const auto reply = co_await get_json(transport_, endpoint_, token_,
                                       "/v1/debits/" + std::string(idempotency_key));
  if (!reply) co_return domain::InquiryFailed{"bank " + reply.error().detail};
  co_return map_inquiry(*reply);
}

}  // namespace ic::bank
