// Web-identity (IRSA) credentials through STS.
#include "aws/credentials/credentials_web_identity.hpp"

#include <fmt/format.h>

#include "aws/credentials/credentials_common.hpp"
#include "aws/credentials/sts.hpp"
#include "aws/protocol/error_mapping.hpp"
#include "core/small_file.hpp"

namespace ic::aws {
namespace {

using namespace std::chrono_literals;

constexpr std::string_view kSource = "web identity";
// STS takes tokens of up to 20,000 characters; a larger file is not a token.
constexpr std::size_t kMaxTokenBytes = 20'000;
// One STS round trip, on the cache's refresher thread: it bounds how long a refresh takes.
constexpr http::HttpTimeouts kStsTimeouts{.connect = 2s, .total = 10s};

std::string sts_endpoint(const EnvLookup& env) {
  const auto region = resolve_region(env);
  if (region || env_value(env, "AWS_ENDPOINT_URL_STS") || env_value(env, "AWS_ENDPOINT_URL")) {
    return resolve_endpoint("sts", region.value_or(""), env);
  }
  return "https://sts.amazonaws.com";
}

// STS may echo what it was sent; the token must not reach a log through its message.
void redact(std::string& text, std::string_view token) {
  if (token.empty()) return;
  for (auto at = text.find(token); at != std::string::npos; at = text.find(token, at)) {
    text.replace(at, token.size(), "<token>");
  }
}

}  // namespace

std::expected<Credentials, AwsError> WebIdentityCredentialsProvider::credentials() {
  const auto token_file = env_value(env_, "AWS_WEB_IDENTITY_TOKEN_FILE");
  const auto role_arn = env_value(env_, "AWS_ROLE_ARN");
  if (!token_file && !role_arn) {
    return std::unexpected(credentials_not_found(
        fmt::format("{}: AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN unset", kSource)));
  }
  if (!token_file || !role_arn) {
    return std::unexpected(credentials_invalid(fmt::format(
        "{}: AWS_WEB_IDENTITY_TOKEN_FILE and AWS_ROLE_ARN must be set together", kSource)));
  }
  const auto session_name =
      env_value(env_, "AWS_ROLE_SESSION_NAME")
          .value_or(fmt::format("charge-recovery-{}", clock_.now().time_since_epoch().count()));
  if (!sts::valid_session_name(session_name)) {
    return std::unexpected(credentials_invalid(fmt::format(
        "{}: AWS_ROLE_SESSION_NAME must be 2-64 characters of [A-Za-z0-9_+=,.@-]", kSource)));
  }
  auto token = read_small_file(*token_file, kMaxTokenBytes);
  if (!token) {
    return std::unexpected(credentials_invalid(
        fmt::format("{}: AWS_WEB_IDENTITY_TOKEN_FILE {}", kSource, token.error())));
  }
  *token = trim_blank(std::move(*token));
  if (token->empty()) {
    return std::unexpected(
        credentials_invalid(fmt::format("{}: AWS_WEB_IDENTITY_TOKEN_FILE is empty", kSource)));
  }

  const auto request = sts::assume_role_with_web_identity_request(
      sts_endpoint(env_), {.role_arn = *role_arn, .session_name = session_name, .token = *token});
  auto response = transport_.send(request, kStsTimeouts);
  if (!response) {
    AwsError error = map_transport_error(response.error());
    error.message = fmt::format("{}: STS unreachable: {}", kSource, error.message);
    return std::unexpected(std::move(error));
  }
  if (response->status < 200 || response->status > 299) {
    AwsError error = sts::parse_error_response(response->status, response->body);
    redact(error.message, *token);
    error.message = fmt::format("{}: {}", kSource, error.message);
    return std::unexpected(std::move(error));
  }
  return sts::parse_assume_role_response(response->body);
}

}  // namespace ic::aws
