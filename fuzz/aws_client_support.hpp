// A JsonClient wired to a ScriptedTransport, as the store and the queue client use it: real
// signing, retries (without sleeping) and error mapping over the replies of the fuzz input.
#pragma once

#include <string>
#include <string_view>

#include "aws/json_client.hpp"
#include "fuzz_support.hpp"
#include "testing/no_sleep.hpp"
#include "testing/static_credentials.hpp"

namespace ic::fuzz {

struct ScriptedAwsClient {
  ScriptedAwsClient(std::string_view service, std::string_view target_prefix,
                    std::string_view script)
      : transport(parse_replies(script)),
        client({.service = std::string(service),
                .signing_name = std::string(service),
                .target_prefix = std::string(target_prefix),
                .endpoint = "http://127.0.0.1:1",
                .region = "us-east-1"},
               transport, credentials, retry, {.clock = clock, .sleeper = no_sleep}) {}

  // Every error that reaches a caller is classified; a malformed 2xx must be flagged as one
  // that may have taken effect.
  static void check(const Error& error) {
    FUZZ_CHECK(!error.code.empty());
    if (error.code == "MalformedResponse" || error.code == "MalformedReply") {
      FUZZ_CHECK(error.ambiguous && error.retryable());
    }
  }

  testing::ScriptedTransport transport;
  testing::StaticCredentials credentials{"AKIDFUZZ", "secret"};
  testing::NoSleep no_sleep;
  testing::ManualClock clock{kFuzzNow};
  aws::RetryPolicy retry{aws::RetryConfig{}};
  aws::JsonClient client;
};

}  // namespace ic::fuzz
