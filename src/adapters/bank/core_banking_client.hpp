// AccountDebitPort over the core-banking HTTP API (docs/design.md §5): POST {base}/v1/debits with
// the charge's idempotency key, the reply mapped onto Debited / DebitRejected /
// DebitUnavailable / DebitMisconfigured.
//
//   http::CurlTransport transport;
//   auto endpoint = bank::BankEndpoint::create(core_banking_url, {.connect = 1s, .total = 5s});
//   bank::CoreBankingClient bank(transport, *endpoint);
//   auto result = co_await bank.debit(charge, charge.id.value());   // in a task on a loop
//
// How replies map, and why:
//   201 {debitId}            Debited{replayed = false}
//   200 {debitId}            Debited{replayed = true}: an earlier call with this key moved the
//                            money; this one moved nothing.
//   2xx without a valid debitId, or any other 2xx
//                            DebitUnavailable: we never claim a debit we cannot name. The retry
//                            with the same key asks the bank again and gets the original answer.
//   409                      DebitRejected{IDEMPOTENCY_KEY_CONFLICT}: the key was used with
//                            another body; final.
//   422 {code}               DebitRejected{code} when code is [A-Z0-9_]{1,64}, else
//                            DebitRejected{UNPROCESSABLE}: a business refusal is final.
//   5xx, 408, 429, connection failures, timeouts
//                            DebitUnavailable: transient. Safe to retry because the bank dedupes
//                            on the key; a timeout after sending may have committed the debit,
//                            and the retry then returns the original result.
//   TLS handshake refused over certificates, or the bearer token file unusable
//                            DebitMisconfigured, like the 4xx below: our credentials are wrong.
//   other 4xx (400, 401, 403, 404, ...) and 1xx/3xx
//                            DebitMisconfigured: these say OUR request or configuration is
//                            wrong, not that the charge is. Recording FAILED would be final and
//                            wrong, so the message keeps being retried until the queue's
//                            maxReceiveCount moves it to the DLQ, where an operator redrives it
//                            after the fix.
// Detail strings never contain the full account number (see bank_call.hpp's describe()).
#pragma once

#include "adapters/bank/bank_endpoint.hpp"
#include "adapters/bank/bearer_token_file.hpp"
#include "core/time.hpp"
#include "domain/ports.hpp"
#include "http/http_transport.hpp"

namespace ic::bank {

// Thread-safety: debit() returns a task awaited at once on an event loop's thread; any number
// are in flight at once, on any number of loops (the client holds no mutable state, and the
// token file and the transport are safe to share). Ownership: borrows the transport and the
// token file (when given), which must outlive it and every task it returned.
// find_debit (the status inquiry, docs/design.md §5): GET {base}/v1/debits/{key}; 200 {debitId}
// DebitFound, 404 DebitNotFound, anything else (or no answer) InquiryFailed.
class CoreBankingClient final : public domain::AccountDebitPort, public domain::DebitInquiryPort {
 public:
  // With `token`, every call carries Authorization: Bearer <token> (bank_call.hpp: re-read on
  // rotation, one retry after a 401).
  CoreBankingClient(http::AsyncHttpTransport& transport, BankEndpoint endpoint,
                    BearerTokenFile* token = nullptr, const Clock& clock = real_clock());

  // An idempotency key outside [A-Za-z0-9._:-]{1,256} is never sent: DebitMisconfigured.
  [[nodiscard]] Task<domain::DebitResult> debit(const domain::Charge& charge,
                                                std::string_view idempotency_key) override;
  // A key outside [A-Za-z0-9._:-]{1,256} is never sent: InquiryFailed.
  [[nodiscard]] Task<domain::InquiryResult> find_debit(std::string_view idempotency_key) override;

 private:
  http::AsyncHttpTransport& transport_;
  const BankEndpoint endpoint_;
  BearerTokenFile* const token_;
  const Clock& clock_;  // reads an HTTP-date Retry-After
};

}  // namespace ic::bank
