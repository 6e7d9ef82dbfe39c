// Container (ECS / EKS Pod Identity) credentials.
#include "aws/credentials/credentials_container.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "aws/credentials/credentials_common.hpp"
#include "aws/credentials/credentials_http.hpp"
#include "core/small_file.hpp"

namespace ic::aws {
namespace {

constexpr std::string_view kSource = "container credentials";
// The EKS Pod Identity token is a JWT of a few KiB; a larger file is not a token.
constexpr std::size_t kMaxTokenBytes = 20'000;

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
    auto text = read_small_file(*file, kMaxTokenBytes);
    if (!text) {
      return std::unexpected(credentials_invalid(
          fmt::format("{}: AWS_CONTAINER_AUTHORIZATION_TOKEN_FILE {}", kSource, text.error())));
    }
    token = trim_blank(std::move(*text));
  } else if (auto literal = env_value(env_, "AWS_CONTAINER_AUTHORIZATION_TOKEN")) {
    token = trim_blank(std::move(*literal));
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
