// What the service reports as it decides: the composition root turns these into JSON logs and
// metrics. Every hook defaults to nothing so a test overrides only what it checks.
#pragma once

#include <string_view>

#include "core/error.hpp"
#include "domain/charge.hpp"
#include "domain/ports.hpp"
#include "idempotency/claim_record.hpp"
#include "idempotency/idempotency_store.hpp"

namespace ic::application {

// Thread-safety: called concurrently from every worker; implementations must be thread-safe.
class ChargeObserver {
 public:
  virtual ~ChargeObserver() = default;
  virtual void claim_decided(const domain::Charge&, const idempotency::ClaimResult&) {}
  // A copy refused DUPLICATE_IN_PROGRESS was settled by this process's own holder's final
  // write, after waiting this long for it.
  virtual void copy_settled_locally(const domain::Charge&, Millis /*waited*/) {}
  virtual void debit_finished(const domain::Charge&, const domain::DebitResult&) {}
  virtual void notification_finished(const domain::Charge&, const domain::NotificationResult&) {}
  // A store call failed after the store's own retries.
  virtual void store_failed(const domain::Charge&, idempotency::StoreOperation, const Error&) {}
  // Our complete/fail/release was refused because another worker holds the claim now.
  // `claim_token` is the token of our claim, so a history can tell which claim was fenced.
  virtual void fenced(const domain::Charge&, idempotency::StoreOperation,
                      std::string_view /*claim_token*/) {}
  // complete or fail took effect, under the claim with this token.
  virtual void recorded(const domain::Charge&, idempotency::StoreOperation,
                        std::string_view /*claim_token*/) {}
};

}  // namespace ic::application
