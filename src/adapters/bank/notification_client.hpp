// NotificationPort over the notification HTTP API (docs/design.md §5): POST {base}/v1/notifications
// with the idempotency key the service passes ("<chargeId>:notify"), so a notification sent
// again after a crash is deduplicated by the notification service.
//
//   bank::NotificationClient notifier(transport, *endpoint);
//   auto sent = co_await notifier.notify(charge, debit_ref, notify_key);  // in a task on a loop
//
// Any 2xx is NotificationSent; every other status and every transport failure is
// NotificationFailed with a detail (never the full account number). The caller records the
// charge DEBITED_NOTIFICATION_FAILED; nothing here retries, since a retry that holds the charge
// open costs more than a notification an operator follows up.
#pragma once

#include "adapters/bank/bank_endpoint.hpp"
#include "adapters/bank/bearer_token_file.hpp"
#include "core/time.hpp"
#include "domain/ports.hpp"
#include "http/http_transport.hpp"

namespace ic::bank {

// Thread-safety: notify() returns a task awaited at once on an event loop's thread; any number
// are in flight at once, on any number of loops (the client holds no mutable state, and the
// token file and the transport are safe to share). Ownership: borrows the transport and the
// token file (when given), which must outlive it and every task it returned.
class NotificationClient final : public domain::NotificationPort {
 public:
  // With `token`, every call carries Authorization: Bearer <token> (bank_call.hpp: re-read on
  // rotation, one retry after a 401).
  NotificationClient(http::AsyncHttpTransport& transport, BankEndpoint endpoint,
                     BearerTokenFile* token = nullptr, const Clock& clock = real_clock());

  // An idempotency key outside [A-Za-z0-9._:-]{1,256} is never sent: NotificationFailed.
  [[nodiscard]] Task<domain::NotificationResult> notify(const domain::Charge& charge,
                                                        std::string_view debit_ref,
                                                        std::string_view idempotency_key) override;

 private:
  http::AsyncHttpTransport& transport_;
  const BankEndpoint endpoint_;
  BearerTokenFile* const token_;
  const Clock& clock_;  // reads an HTTP-date Retry-After
};

}  // namespace ic::bank
