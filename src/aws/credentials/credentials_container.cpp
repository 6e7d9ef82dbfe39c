// Container (ECS / EKS Pod Identity) credentials.
#include "aws/credentials/credentials_container.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

#include "aws/credentials/credentials_common.hpp"
#include "aws/credentials/credentials_http.hpp"

namespace ic::aws {
namespace {

constexpr std::string_view kSource = "container credentials";

bool is_loopback_ipv4(std::string_view host) {
  // 127.0.0.0/8 written as a dotted quad; anything else (names, octal forms) is refused.
  if (!host.starts_with("127.")) return false;
  int dots = 0;
  for (char c : host) {
    if (c == '.') {
      ++dots;
    } else if (c < '0' || c > '9') {
      return false;
    }
  }
  return dots == 3 && !host.ends_with('.') && host.find("..") == std::string_view::npos;
}

std::string trim(std::string s) {
  const auto blank = " \t\r\n";
  s.erase(0, s.find_first_not_of(blank));
  s.erase(s.find_last_not_of(blank) + 1);
  return s;
}

}  // namespace

bool container_full_uri_allowed(const http::UrlParts& url) {
  if (url.scheme == "https") return true;
  if (url.scheme != "http") return false;
  static constexpr std::array<std::string_view, 5> kHosts = {"localhost", "::1", "169.254.170.2",
                                                             "169.254.170.23", "fd00:ec2::23"};
  return std::ranges::find(kHosts, url.host) != kHosts.end() || is_loopback_ipv4(url.host);
}

std::expected<http::HttpRequest, AwsError> ContainerCredentialsProvider::build_request() const {
  http::HttpRequest request{.method = "GET"};
  if (auto relative = env_value(env_, "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI")) {
    request.url = agent_url_ + *relative;
  } else if (auto full = env_value(env_, "AWS_CONTAINER_CREDENTIALS_FULL_URI")) {
    const auto url = http::parse_url(*full);
    if (!url || !container_full_uri_allowed(*url)) {
      return std::unexpected(credentials_invalid(fmt::format(
          "{}: AWS_CONTAINER_CREDENTIALS_FULL_URI must be https, or http to a loopback or "
          "ECS/EKS agent host",
          kSource)));
    }
    request.url = std::move(*full);
  } else {
    return std::unexpected(credentials_not_found(
        fmt::format("{}: AWS_CONTAINER_CREDENTIALS_RELATIVE_URI and _FULL_URI unset", kSource)));
  }

  std::optional<std::string> token;
  if (auto file = env_value(env_, "AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE")) {
    std::ifstream in(*file, std::ios::binary);
    if (!in) {
      return std::unexpected(credentials_invalid(
          fmt::format("{}: cannot read AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE", kSource)));
    }
    std::ostringstream text;
    text << in.rdbuf();
    token = trim(text.str());
  } else if (auto literal = env_value(env_, "AWS_CONTAINER_AUTHORIZATION_TOKEN")) {
    token = trim(std::move(*literal));
  }
  if (token) {
    // A line break would let the token smuggle extra headers into the request.
    if (token->find_first_of("\r\n") != std::string::npos) {
      return std::unexpected(credentials_invalid(
          fmt::format("{}: authorization token contains a line break", kSource)));
    }
    request.headers.emplace_back("Authorization", std::move(*token));
  }
  request.headers.emplace_back("Accept", "application/json");
  return request;
}

std::expected<Credentials, AwsError> ContainerCredentialsProvider::credentials() {
  auto request = build_request();
  if (!request) return std::unexpected(std::move(request.error()));
  auto response = credentials_http::fetch(transport_, *request, kSource);
  if (!response) return std::unexpected(std::move(response.error()));
  return credentials_http::parse_document(response->body, kSource);
}

}  // namespace ic::aws
