// The charge domain's outbound ports: the bank's debit, the customer notification and a source
// of claim tokens. Adapters implement them; tests use plain fakes.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "core/task.hpp"
#include "core/time.hpp"
#include "domain/charge.hpp"

namespace ic::domain {

struct Debited {
  std::string debit_ref;  // the bank's transaction id
  bool replayed = false;  // the bank answered an earlier debit with this key (no money moved)
};
struct DebitRejected {  // a business refusal: final for this charge
  std::string code;     // e.g. INSUFFICIENT_FUNDS, ACCOUNT_CLOSED, IDEMPOTENCY_KEY_CONFLICT
};
struct DebitUnavailable {  // 5xx, timeout, connection: the outcome is unknown, retry is safe
  std::string detail;
  // The bank's Retry-After on a 429 or 503, bounded: no debit before it has passed.
  std::optional<Millis> retry_after;
};
// Our request or configuration is wrong, not the charge (the bank refused the call itself, or
// we refused to send it). Never final: recording FAILED would be final and wrong, so it is
// retried like DebitUnavailable until the queue dead-letters the message; an operator fixes
// the cause and redrives it.
struct DebitMisconfigured {
  std::string detail;
};
using DebitResult = std::variant<Debited, DebitRejected, DebitUnavailable, DebitMisconfigured>;

// Debits a customer's account through core banking.
// Contract: the bank applies at most one debit per idempotency key and answers a repeated key
// with the original result; that is what makes a retry after a crash or timeout safe.
// Thread-safety: debit() returns a task awaited at once on an event loop's thread; many debits
// are in flight at once. Ownership: the arguments need only live until the task finishes.
class AccountDebitPort {
 public:
  virtual ~AccountDebitPort() = default;
  [[nodiscard]] virtual Task<DebitResult> debit(const Charge& charge,
                                                std::string_view idempotency_key) = 0;
};

// What a status inquiry learnt of an earlier debit with a key (docs/design.md §5, "GET
// /v1/debits/{idempotencyKey}").
struct DebitFound {  // the bank knows the key: that debit moved the money
  std::string debit_ref;
};
struct DebitNotFound {};  // the bank does not know the key (never debited, or forgotten)
struct InquiryFailed {    // no answer: a transport failure, a 5xx, an unexpected reply
  std::string detail;
};
using InquiryResult = std::variant<DebitFound, DebitNotFound, InquiryFailed>;

// Looks an earlier debit up by its idempotency key, before a debit whose earlier attempt ended
// without an answer is sent again. A 404 is only as good as the bank's memory of keys: past the
// bank's idempotency window it cannot tell "never debited" from "forgotten".
// Thread-safety and ownership: as AccountDebitPort.
class DebitInquiryPort {
 public:
  virtual ~DebitInquiryPort() = default;
  [[nodiscard]] virtual Task<InquiryResult> find_debit(std::string_view idempotency_key) = 0;
};

struct NotificationSent {};
struct NotificationFailed {
  std::string detail;
  // False when the service answered and refused (a 4xx): it is up, so its circuit counts a
  // success. True for 5xx, 429, timeouts and connection failures.
  bool transient = true;
  std::optional<Millis> retry_after;  // its Retry-After on a 429 or 503, bounded
};
using NotificationResult = std::variant<NotificationSent, NotificationFailed>;

// Tells the customer about a debit. Best effort: a failure is recorded, never retried by
// debiting again. Thread-safety and ownership: as AccountDebitPort.
class NotificationPort {
 public:
  virtual ~NotificationPort() = default;
  [[nodiscard]] virtual Task<NotificationResult> notify(const Charge& charge,
                                                        std::string_view debit_ref,
                                                        std::string_view idempotency_key) = 0;
};

// Unpredictable claim tokens: a token that another worker could guess would defeat fencing.
// Thread-safety: next() may be called from any thread.
class TokenSource {
 public:
  virtual ~TokenSource() = default;
  [[nodiscard]] virtual std::string next() = 0;
};

}  // namespace ic::domain
