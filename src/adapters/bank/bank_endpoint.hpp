// Where a bank API lives and how long we wait for it: a validated http(s) base URL and the
// connect/total timeouts, shared by the core-banking and the notification clients.
//
//   auto endpoint = bank::BankEndpoint::create("https://core.bank.internal/api/",
//                                              {.connect = 1s, .total = 5s});
//   if (!endpoint) fail_start_up("CORE_BANKING_URL: " + endpoint.error());
//   endpoint->url("/v1/debits");  // "https://core.bank.internal/api/v1/debits"
#pragma once

#include <expected>
#include <string>
#include <string_view>

#include "http/http_transport.hpp"

namespace ic::bank {

// An immutable value; copy it freely between threads.
class BankEndpoint {
 public:
  // Accepts scheme http or https, a host, an optional port (1-65535) and an optional path
  // prefix; trailing slashes are dropped. Rejected, with a one-line reason: userinfo (it
  // would end up in logs), a query or fragment (paths are appended), spaces or control
  // characters, and timeouts that are not positive or a connect timeout above the total.
  [[nodiscard]] static std::expected<BankEndpoint, std::string> create(std::string_view base_url,
                                                                       http::HttpTimeouts timeouts);

  // The base URL followed by `path`, which starts with '/'.
  [[nodiscard]] std::string url(std::string_view path) const;
  [[nodiscard]] const std::string& base_url() const { return base_url_; }
  [[nodiscard]] const http::HttpTimeouts& timeouts() const { return timeouts_; }

 private:
  BankEndpoint(std::string base_url, http::HttpTimeouts timeouts)
      : base_url_(std::move(base_url)), timeouts_(timeouts) {}

  std::string base_url_;  // without a trailing slash
  http::HttpTimeouts timeouts_;
};

}  // namespace ic::bank
