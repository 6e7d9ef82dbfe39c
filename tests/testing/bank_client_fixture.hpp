// The common ground of the core-banking and notification client tests: the real curl
// transport, one charge on a known account, and clients built towards a scripted local
// server (scripted_bank_server.hpp) with short timeouts. The clients' calls are tasks: a test
// runs them with event::run_blocking, on its thread's own loop.
#pragma once

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <string_view>

#include "adapters/bank/bank_endpoint.hpp"
#include "domain/charge.hpp"
#include "event/run_blocking.hpp"
#include "http/curl_transport.hpp"
#include "testing/fakes.hpp"

namespace ic::testing {

inline constexpr std::string_view kAccount = "ACC-0012345678";
inline const http::HttpTimeouts kTimeouts{.connect = std::chrono::seconds{1},
                                          .total = std::chrono::seconds{3}};

class BankClientTest : public ::testing::Test {
 protected:
  // A bank client (CoreBankingClient, NotificationClient) over `transport_`; a base URL the
  // test got wrong fails the test.
  template <class Client>
  Client client_for(const std::string& base_url, http::HttpTimeouts timeouts = kTimeouts) {
    auto endpoint = bank::BankEndpoint::create(base_url, timeouts);
    EXPECT_TRUE(endpoint) << endpoint.error();
    return Client(transport_, endpoint.value());
  }

  http::CurlTransport transport_;
  const domain::Charge charge_ = make_charge("CHG-20261130-000123", 2500, std::string(kAccount));
};

}  // namespace ic::testing
