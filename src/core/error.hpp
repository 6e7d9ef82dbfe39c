// The one failure vocabulary of every boundary: the AWS clients, the queue port and the
// idempotency store all answer a failed call with an ic::Error. Its class tells the caller
// what to do (the way abseil documents each status code); `ambiguous` tells it whether the
// failed request may have taken effect all the same. Nothing translates one layer's errors
// into another's: an SQS or DynamoDB failure reaches the consumer or the service as the AWS
// client classified it.
//
//   auto reply = store.claim(request);
//   if (!reply && reply.error().ambiguous) { /* re-check: the claim may have been written */ }
//   if (!reply && reply.error().retryable()) { /* back off and try again */ }
#pragma once

#include <string>
#include <string_view>

namespace ic {

enum class ErrorClass {
  // Transient: a 5xx, a timeout, a dropped or refused connection, a reply we could not read,
  // an InternalError batch entry. What to do: retry the same request with backoff. It is
  // expected to succeed once the service or the network recovers.
  Retryable,
  // The service asked us to slow down (ThrottlingException, ProvisionedThroughputExceeded,
  // HTTP 429, ...). What to do: retry with a longer backoff and less concurrency; retrying at
  // the same rate only prolongs it.
  Throttling,
  // Will not succeed as sent: validation, access denied, a bad signature, a missing table or
  // queue, an invalid receipt handle, a record we cannot decode. What to do: do not retry the
  // request as sent. Fix the request or the configuration; an operator is needed, so surface
  // it (log it at error level, count it).
  Permanent,
};

// "retryable", "throttling", "permanent": the value of the `kind` and `class` labels and log
// fields.
[[nodiscard]] constexpr std::string_view to_string(ErrorClass error_class) {
  switch (error_class) {
    case ErrorClass::Retryable:
      return "retryable";
    case ErrorClass::Throttling:
      return "throttling";
    case ErrorClass::Permanent:
      return "permanent";
  }
  return "unknown";
}

struct Error {
  ErrorClass error_class = ErrorClass::Retryable;
  // Machine-readable: the service's error type (ConditionalCheckFailedException,
  // ReceiptHandleIsInvalid, AWS.SimpleQueueService.NonExistentQueue) or one of ours
  // (CouldNotConnect, TimeoutAfterSend, MalformedReply, ClaimUndecided, ...).
  std::string code;
  // Human-readable, for logs. Never contains a credential, a signature or a secret, and never
  // carries the ambiguity (that is the flag below).
  std::string message;
  // The request may have taken effect although we saw a failure: a timeout or a dropped
  // connection after sending, a 5xx reply, a 2xx we could not read. What to do: re-check
  // before assuming it did not (read the state again, or re-send a write that recognises its
  // own earlier success). Independent of the class; an ambiguous failure is usually Retryable.
  bool ambiguous = false;

  // Retryable and Throttling: the same request may succeed later.
  [[nodiscard]] bool retryable() const { return error_class != ErrorClass::Permanent; }
};

}  // namespace ic
