// An AWS failure: the shared ic::Error (its class set the way the SDKs' standard retry mode
// classifies) plus what only the AWS layer reads. An AwsError is an ic::Error, so the SQS and
// DynamoDB adapters hand it on as their port's error as it is; the extra fields stay here.
#pragma once

#include <string>

#include "core/error.hpp"

namespace ic::aws {

// `code` is the error type after '#', e.g. ConditionalCheckFailedException; for transport
// failures CouldNotConnect, TimeoutBeforeSend, TimeoutAfterSend or TransportError.
struct AwsError : Error {
  long http_status = 0;       // 0 when no response arrived
  std::string response_body;  // raw body of an error reply (e.g. carries Item for ALL_OLD)
};

}  // namespace ic::aws
