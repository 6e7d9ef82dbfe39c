#include "adapters/bank/bank_endpoint.hpp"

#include <algorithm>
#include <charconv>

#include "http/url.hpp"

namespace ic::bank {
namespace {

bool valid_port(std::string_view port) {
  if (port.empty()) return true;
  int value = 0;
  const auto [end, error] = std::from_chars(port.data(), port.data() + port.size(), value);
  return error == std::errc{} && end == port.data() + port.size() && value >= 1 && value <= 65535;
}

std::expected<void, std::string> check_url(std::string_view url) {
  if (std::ranges::any_of(url, [](char c) { return c <= ' ' || c == '\x7f'; })) {
    return std::unexpected("must not contain spaces, control or non-ASCII characters");
  }
  const auto parts = http::parse_url(url);
  if (!parts) return std::unexpected("must be an absolute URL: http(s)://host[:port][/path]");
  if (parts->scheme != "http" && parts->scheme != "https") {
    return std::unexpected("scheme must be http or https");
  }
  const auto after_scheme = url.substr(url.find("://") + 3);
  if (after_scheme.substr(0, after_scheme.find_first_of("/?#")).find('@') !=
      std::string_view::npos) {
    return std::unexpected("must not carry credentials (user@host)");
  }
  if (url.find_first_of("?#") != std::string_view::npos) {
    return std::unexpected("must not have a query or fragment");
  }
  if (!valid_port(parts->port)) return std::unexpected("port must be 1-65535");
  return {};
}

}  // namespace

std::expected<BankEndpoint, std::string> BankEndpoint::create(std::string_view base_url,
                                                              http::HttpTimeouts timeouts) {
  if (auto checked = check_url(base_url); !checked) {
    return std::unexpected("invalid base URL: " + checked.error());
  }
  if (timeouts.connect.count() <= 0 || timeouts.total.count() <= 0) {
    return std::unexpected("timeouts must be positive");
  }
  if (timeouts.connect > timeouts.total) {
    return std::unexpected("connect timeout must not exceed the total timeout");
  }
  while (base_url.ends_with('/')) base_url.remove_suffix(1);
  return BankEndpoint(std::string(base_url), timeouts);
}

std::string BankEndpoint::url(std::string_view path) const {
  std::string out = base_url_;
  out += path;
  return out;
}

}  // namespace ic::bank
