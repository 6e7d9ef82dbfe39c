// URL splitting for signing and for the container-credentials host check.
#include "http/url.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace ic::http {

std::string UrlParts::authority() const {
  const bool ipv6 = host.find(':') != std::string::npos;
  std::string out;
  out.reserve(host.size() + port.size() + 3);
  if (ipv6) out.push_back('[');
  out.append(host);
  if (ipv6) out.push_back(']');
  const bool default_port =
      port.empty() || (scheme == "http" && port == "80") || (scheme == "https" && port == "443");
  if (!default_port) out.append(":").append(port);
  return out;
}

std::optional<UrlParts> parse_url(std::string_view url) {
  const auto scheme_end = url.find("://");
  if (scheme_end == std::string_view::npos || scheme_end == 0) return std::nullopt;
  UrlParts parts;
  parts.scheme = std::string(url.substr(0, scheme_end));
  std::ranges::transform(parts.scheme, parts.scheme.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });

  std::string_view rest = url.substr(scheme_end + 3);
  const auto authority_end = rest.find_first_of("/?#");
  std::string_view authority = rest.substr(0, authority_end);
  rest = authority_end == std::string_view::npos ? std::string_view{} : rest.substr(authority_end);

  // Userinfo is never part of an AWS endpoint; drop it rather than sign it as the host.
  if (const auto at = authority.rfind('@'); at != std::string_view::npos) {
    authority = authority.substr(at + 1);
  }
  if (authority.starts_with('[')) {
    const auto close = authority.find(']');
    if (close == std::string_view::npos) return std::nullopt;
    parts.host = std::string(authority.substr(1, close - 1));
    if (close + 1 < authority.size() && authority[close + 1] == ':') {
      parts.port = std::string(authority.substr(close + 2));
    }
  } else {
    const auto colon = authority.rfind(':');
    parts.host = std::string(authority.substr(0, colon));
    if (colon != std::string_view::npos) parts.port = std::string(authority.substr(colon + 1));
  }
  if (parts.host.empty()) return std::nullopt;

  if (const auto fragment = rest.find('#'); fragment != std::string_view::npos) {
    rest = rest.substr(0, fragment);
  }
  const auto question = rest.find('?');
  const auto path = rest.substr(0, question);
  parts.path = path.empty() ? std::string(1, '/') : std::string(path);
  if (question != std::string_view::npos) parts.query = std::string(rest.substr(question + 1));
  return parts;
}

std::expected<UrlParts, std::string> parse_http_url(std::string_view url) {
  const auto invalid = [] {
    return std::unexpected<std::string>(
        "must be an http:// or https:// URL with a host (port 1..65535 if given, no whitespace)");
  };
  auto parts = parse_url(url);
  if (!parts || (parts->scheme != "http" && parts->scheme != "https")) return invalid();
  if (std::ranges::any_of(url, [](unsigned char c) { return c <= ' ' || c == 0x7f; })) {
    return invalid();
  }
  if (!parts->port.empty()) {
    unsigned port = 0;
    const char* end = parts->port.data() + parts->port.size();
    const auto [ptr, ec] = std::from_chars(parts->port.data(), end, port);
    if (ec != std::errc{} || ptr != end || port == 0 || port > 65535) return invalid();
  }
  return *std::move(parts);
}

}  // namespace ic::http
