// Failure vocabulary at the store boundary. The kind decides what happens to the message:
// retryable and throttling become a no-ack with backoff, permanent needs an operator.
#pragma once

#include <string>
#include <string_view>

namespace ic::idem {

enum class ErrorKind {
  Retryable,   // transient (5xx, timeout, connection): retry with backoff
  Throttling,  // the service asked us to slow down: retry with a longer backoff
  Permanent,   // will not succeed as sent (validation, access denied, missing table)
};

[[nodiscard]] std::string_view to_string(ErrorKind kind);

struct StoreError {
  ErrorKind kind = ErrorKind::Retryable;
  std::string code;     // e.g. ProvisionedThroughputExceededException, Timeout
  std::string message;  // human-readable, never contains a credential
};

}  // namespace ic::idem
