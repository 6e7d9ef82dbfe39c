#include "aws/credentials/sts.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "aws/credentials/credentials_common.hpp"
#include "aws/credentials/credentials_http.hpp"
#include "aws/protocol/error_mapping.hpp"
#include "aws/protocol/query_xml.hpp"
#include "aws/protocol/uri_encode.hpp"

namespace ic::aws::sts {
namespace {

constexpr std::string_view kCredentials =
    "AssumeRoleWithWebIdentityResponse/AssumeRoleWithWebIdentityResult/Credentials/";
constexpr std::string_view kAccessKeyId =
    "AssumeRoleWithWebIdentityResponse/AssumeRoleWithWebIdentityResult/Credentials/AccessKeyId";
constexpr std::string_view kSecretAccessKey =
    "AssumeRoleWithWebIdentityResponse/AssumeRoleWithWebIdentityResult/Credentials/"
    "SecretAccessKey";
constexpr std::string_view kSessionToken =
    "AssumeRoleWithWebIdentityResponse/AssumeRoleWithWebIdentityResult/Credentials/SessionToken";
constexpr std::string_view kExpiration =
    "AssumeRoleWithWebIdentityResponse/AssumeRoleWithWebIdentityResult/Credentials/Expiration";
constexpr std::string_view kErrorCode = "ErrorResponse/Error/Code";
constexpr std::string_view kErrorMessage = "ErrorResponse/Error/Message";
constexpr std::size_t kMaxMessage = 200;

std::string trimmed(std::string_view text) {
  const auto blank = " \t\r\n";
  const auto first = text.find_first_not_of(blank);
  if (first == std::string_view::npos) return {};
  return std::string(text.substr(first, text.find_last_not_of(blank) - first + 1));
}

bool is_code(std::string_view code) {
  return !code.empty() && code.size() <= 64 &&
         std::ranges::all_of(code, [](unsigned char c) { return std::isalnum(c) || c == '.'; });
}

std::string printable_prefix(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kMaxMessage)) out += (c >= ' ' && c <= '~') ? c : '?';
  if (text.size() > kMaxMessage) out += "...";
  return out;
}

}  // namespace

bool valid_session_name(std::string_view name) {
  return name.size() >= 2 && name.size() <= 64 && std::ranges::all_of(name, [](unsigned char c) {
           return std::isalnum(c) ||
                  std::string_view("_+=,.@-").find(static_cast<char>(c)) != std::string_view::npos;
         });
}

http::HttpRequest assume_role_with_web_identity_request(std::string_view endpoint,
                                                        const WebIdentityRequest& request) {
  auto param = [](std::string_view name, std::string_view value) {
    return fmt::format("&{}={}", name, uri_encode(value, /*keep_slash=*/false));
  };
  std::string body = "Action=AssumeRoleWithWebIdentity&Version=2011-06-15";
  body += param("RoleArn", request.role_arn);
  body += param("RoleSessionName", request.session_name);
  body += param("WebIdentityToken", request.token);
  return {.method = "POST",
          .url = fmt::format("{}/", endpoint),
          .headers = {{"Content-Type", "application/x-www-form-urlencoded; charset=utf-8"},
                      {"Accept", "text/xml"}},
          .body = std::move(body)};
}

std::expected<Credentials, AwsError> parse_assume_role_response(std::string_view body) {
  auto fields = read_xml_fields(body, {kAccessKeyId, kSecretAccessKey, kSessionToken, kExpiration});
  if (!fields) {
    return std::unexpected(credentials_invalid(fmt::format("STS answer: {}", fields.error())));
  }
  auto field = [&](std::string_view path) {
    const auto it = fields->find(path);
    return it == fields->end() ? std::string{} : trimmed(it->second);
  };
  Credentials out{.access_key_id = field(kAccessKeyId),
                  .secret_access_key = field(kSecretAccessKey),
                  .session_token = field(kSessionToken)};
  for (const auto& [path, value] : {std::pair{kAccessKeyId, &out.access_key_id},
                                    std::pair{kSecretAccessKey, &out.secret_access_key},
                                    std::pair{kSessionToken, &out.session_token}}) {
    if (value->empty()) {
      return std::unexpected(credentials_invalid(
          fmt::format("STS answer lacks Credentials/{}", path.substr(kCredentials.size()))));
    }
  }
  out.expiration = credentials_http::parse_iso8601(field(kExpiration));
  if (!out.expiration) {
    return std::unexpected(
        credentials_invalid("STS answer lacks an ISO-8601 Credentials/Expiration"));
  }
  return out;
}

AwsError parse_error_response(long http_status, std::string_view body) {
  AwsError error;
  error.http_status = http_status;
  error.code = "StsError";
  std::string message;
  if (auto fields = read_xml_fields(body, {kErrorCode, kErrorMessage})) {
    if (auto it = fields->find(kErrorCode); it != fields->end() && is_code(trimmed(it->second))) {
      error.code = trimmed(it->second);
    }
    if (auto it = fields->find(kErrorMessage); it != fields->end()) {
      message = printable_prefix(trimmed(it->second));
    }
  }
  error.error_class = error.code == "IDPCommunicationError"
                          ? ErrorClass::Retryable
                          : classify_error(error.code, http_status);
  error.message = fmt::format("STS AssumeRoleWithWebIdentity: HTTP {} {}{}{}", http_status,
                              error.code, message.empty() ? "" : ": ", message);
  return error;
}

}  // namespace ic::aws::sts
