// sqs::SqsClient over a real JsonClient and a test transport, as the SQS unit tests build it:
// static credentials, no retry sleeps, an endpoint nothing listens on (the transport answers).
#pragma once

#include <chrono>
#include <string>
#include <utility>

#include "adapters/sqs/sqs_client.hpp"
#include "testing/no_sleep.hpp"
#include "testing/static_credentials.hpp"

namespace ic::testing {

template <class Transport>
struct SqsWiring {
  template <class... TransportArgs>
  explicit SqsWiring(std::chrono::milliseconds total, TransportArgs&&... transport_args)
      : transport(std::forward<TransportArgs>(transport_args)...),
        client({.service = "sqs",
                .signing_name = "sqs",
                .target_prefix = std::string(sqs::kSqsTargetPrefix),
                .endpoint = "http://127.0.0.1:1",
                .region = "us-east-1",
                .timeouts = {.connect = std::chrono::seconds{1}, .total = total}},
               transport, credentials, retry, {.sleeper = no_sleep}),
        sqs(client) {}

  Transport transport;
  StaticCredentials credentials{"AKID", "s"};
  NoSleep no_sleep;
  aws::RetryPolicy retry{aws::RetryConfig{}};
  aws::JsonClient client;
  sqs::SqsClient sqs;
};

}  // namespace ic::testing
