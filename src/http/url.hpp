// Splits an absolute URL the way the signer and the credential providers need it.
//
//   auto url = parse_url("http://127.0.0.1:4566/a/b?x=1");
//   // url->scheme == "http", url->host == "127.0.0.1", url->port == "4566",
//   // url->path == "/a/b", url->query == "x=1"
//
// No percent-decoding happens here: the parts are the bytes that go on the wire.
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>

namespace ic::http {

struct UrlParts {
  std::string scheme;  // lower-cased
  std::string host;    // without brackets for IPv6 literals
  std::string port;    // empty when absent
  std::string path;    // "/" when absent
  std::string query;   // without '?'; empty when absent

  // host[:port] as the Host header carries it; the scheme's default port is left out.
  [[nodiscard]] std::string authority() const;
};

// nullopt when there is no "scheme://" or no host.
[[nodiscard]] std::optional<UrlParts> parse_url(std::string_view url);

// For settings: an http:// or https:// URL with a host, a port of 1..65535 when given, and no
// whitespace or control characters anywhere. The error states the rule, without the value.
[[nodiscard]] std::expected<UrlParts, std::string> parse_http_url(std::string_view url);

}  // namespace ic::http
