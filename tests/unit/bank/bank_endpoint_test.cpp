// BankEndpoint: which base URLs and timeouts are accepted, and how paths are appended.
#include "adapters/bank/bank_endpoint.hpp"

#include <gtest/gtest.h>

namespace ic::bank {
namespace {

using namespace std::chrono_literals;

const http::HttpTimeouts kEndpointTimeouts{.connect = 1s, .total = 5s};

TEST(BankEndpoint, AppendsPathsToTheBaseWithoutItsTrailingSlashes) {
  const std::pair<std::string, std::string> cases[] = {
      {"http://127.0.0.1:8080", "http://127.0.0.1:8080/v1/debits"},
      {"http://127.0.0.1:8080/", "http://127.0.0.1:8080/v1/debits"},
      {"https://core.bank.internal/api//", "https://core.bank.internal/api/v1/debits"},
      {"HTTPS://core.bank.internal:443/api", "HTTPS://core.bank.internal:443/api/v1/debits"},
      {"http://[::1]:9000/", "http://[::1]:9000/v1/debits"},
      {"http://bank.internal/tenants/@finedge", "http://bank.internal/tenants/@finedge/v1/debits"},
  };
  for (const auto& [base, expected] : cases) {
    const auto endpoint = BankEndpoint::create(base, kEndpointTimeouts);
    ASSERT_TRUE(endpoint) << base << ": " << endpoint.error();
    EXPECT_EQ(endpoint->url("/v1/debits"), expected);
    EXPECT_EQ(endpoint->timeouts().connect, 1s);
    EXPECT_EQ(endpoint->timeouts().total, 5s);
  }
}

TEST(BankEndpoint, RejectsUrlsThatAreNotAPlainHttpBase) {
  const std::pair<std::string, std::string> cases[] = {
      {"", "absolute URL"},
      {"127.0.0.1:8080", "absolute URL"},
      {"http://", "absolute URL"},
      {"http:///v1", "absolute URL"},
      {"ftp://bank.internal", "scheme"},
      {"file:///etc/passwd", "absolute URL"},
      {"http://user:secret@bank.internal", "credentials"},
      {"http://bank.internal/api?x=1", "query"},
      {"http://bank.internal/#top", "fragment"},
      {"http://bank internal/", "spaces"},
      {"http://bank.internal/\r\nHost: evil", "control"},
      {"http://bank.internal:0/", "port"},
      {"http://bank.internal:65536/", "port"},
      {"http://bank.internal:80a/", "port"},
  };
  for (const auto& [base, reason] : cases) {
    const auto endpoint = BankEndpoint::create(base, kEndpointTimeouts);
    ASSERT_FALSE(endpoint) << base;
    EXPECT_NE(endpoint.error().find(reason), std::string::npos) << base << ": " << endpoint.error();
  }
}

TEST(BankEndpoint, ErrorsDoNotRepeatTheUrlSoCredentialsInItAreNotLogged) {
  const auto endpoint = BankEndpoint::create("http://user:secret@bank.internal", kEndpointTimeouts);
  ASSERT_FALSE(endpoint);
  EXPECT_EQ(endpoint.error().find("secret"), std::string::npos);
}

TEST(BankEndpoint, RejectsTimeoutsThatAreNotPositiveOrConnectAboveTotal) {
  const http::HttpTimeouts cases[] = {
      {.connect = 0ms, .total = 1s},
      {.connect = 1s, .total = 0ms},
      {.connect = -1ms, .total = 1s},
      {.connect = 2s, .total = 1s},
  };
  for (const auto& timeouts : cases) {
    EXPECT_FALSE(BankEndpoint::create("http://127.0.0.1:8080", timeouts))
        << timeouts.connect.count() << "/" << timeouts.total.count();
  }
  EXPECT_TRUE(BankEndpoint::create("http://127.0.0.1:8080", {.connect = 1s, .total = 1s}));
}

}  // namespace
}  // namespace ic::bank
