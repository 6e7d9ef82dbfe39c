// What the service reports as it decides: the composition root turns these into JSON logs and
// metrics. Every hook defaults to nothing so a test overrides only what it checks.
#pragma once

#include <optional>
#include <string_view>

#include "consumer/disposition.hpp"
#include "core/error.hpp"
#include "domain/charge.hpp"
#include "domain/ports.hpp"
#include "idempotency/claim_record.hpp"
#include "idempotency/idempotency_store.hpp"

namespace ic::application {

// What one delivery of a charge came to and how long each of its steps took, for its one
// summary (ChargeObserver::charge_finished). A step that did not run took zero; one repeated
// (a held probe's claim or debit) counts every attempt. Times are the service clock's.
struct ChargeSteps {
  std::optional<idempotency::ClaimOutcome> claim;  // none when the store never answered
  std::int64_t fence = 0;                          // of the record the claim answered with
  std::optional<domain::DebitResult> debit;        // the last debit call's answer
  std::string_view status;  // recorded by our final write (domain::to_string); empty: none
  Millis claim_time{};
  Millis debit_time{};
  Millis notify_time{};
  Millis record_time{};  // the final write: complete, fail, or release
  Millis local_wait{};   // a copy waiting for this process's holder (copy_settled_locally)
};

// Thread-safety: called concurrently from every worker; implementations must be thread-safe.
class ChargeObserver {
 public:
  virtual ~ChargeObserver() = default;
  virtual void claim_decided(const domain::Charge&, const idempotency::ClaimResult&) {}
  // A copy refused DUPLICATE_IN_PROGRESS was settled by this process's own holder's final
  // write, after waiting this long for it.
  virtual void copy_settled_locally(const domain::Charge&, Millis /*waited*/) {}
  virtual void debit_finished(const domain::Charge&, const domain::DebitResult&) {}
  // A status inquiry before sending again a debit an earlier attempt may have made.
  virtual void debit_inquired(const domain::Charge&, const domain::InquiryResult&) {}
  // Not sent again: an attempt since `first_attempt` may have debited and the bank's idempotency
  // window has passed (DEBIT_UNCERTAIN, docs/design.md §3).
  virtual void debit_uncertain(const domain::Charge&, Instant /*first_attempt*/) {}
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
  // The delivery ended with `disposition`, after the hooks above: once per handle().
  virtual void charge_finished(const domain::Charge&, const ChargeSteps&,
                               const consumer::Disposition& /*disposition*/) {}
};

}  // namespace ic::application
