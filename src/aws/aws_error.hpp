// Errors at the AWS boundary, classified the way the SDKs' standard retry mode does.
#pragma once

#include <string>

namespace ic::aws {

enum class ErrorClass {
  Retryable,   // 5xx, timeouts, connection failures, transient service errors
  Throttling,  // Throttling, ThrottlingException, ProvisionedThroughputExceededException, ...
  Permanent,   // 4xx client errors: validation, access denied, bad signature, not found
};

struct AwsError {
  ErrorClass error_class = ErrorClass::Retryable;
  std::string code;      // error type after '#', e.g. ConditionalCheckFailedException;
                         // for transport failures: CouldNotConnect, TimeoutBeforeSend,
                         // TimeoutAfterSend, http::TransportError
  std::string message;   // never contains a credential or a signature
  long http_status = 0;  // 0 when no response arrived
  // True when the request may have taken effect although we saw a failure (timed out after
  // sending, or the connection dropped mid-response): a conditional write must be re-checked.
  bool ambiguous = false;
  std::string response_body;  // raw body of an error reply (e.g. carries Item for ALL_OLD)
};

}  // namespace ic::aws
