// Shared plumbing of the network credential providers.
#include "aws/credentials/credentials_http.hpp"

#include <fmt/format.h>

#include <charconv>
#include <nlohmann/json.hpp>

#include "aws/credentials/credentials_common.hpp"
#include "core/time.hpp"

namespace ic::aws::credentials_http {
namespace {

std::string_view failure_name(http::TransportFailure failure) {
  switch (failure) {
    case http::TransportFailure::CouldNotConnect:
      return "could not connect";
    case http::TransportFailure::TimeoutBeforeSend:
      return "connect timeout";
    case http::TransportFailure::TimeoutAfterSend:
      return "timeout waiting for the answer";
    case http::TransportFailure::Interrupted:
      return "connection interrupted";
  }
  return "transport failure";
}

bool read_int(std::string_view text, std::size_t pos, std::size_t len, int& out) {
  if (pos + len > text.size()) return false;
  const auto* first = text.data() + pos;
  const auto [ptr, ec] = std::from_chars(first, first + len, out);
  return ec == std::errc{} && ptr == first + len;
}

std::string string_field(const nlohmann::json& doc, const char* name) {
  const auto it = doc.find(name);
  return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

}  // namespace

std::expected<http::HttpResponse, AwsError> fetch(http::HttpTransport& transport,
                                                  const http::HttpRequest& request,
                                                  std::string_view source) {
  auto response = transport.send(request, kMetadataTimeouts);
  if (!response) {
    return std::unexpected(AwsError{
        {.error_class = ErrorClass::Retryable,
         .code = "CredentialsFetchFailed",
         .message = fmt::format("{}: {}", source, failure_name(response.error().failure))}});
  }
  if (response->status < 200 || response->status > 299) {
    return std::unexpected(AwsError{
        {.error_class = response->status >= 500 ? ErrorClass::Retryable : ErrorClass::Permanent,
         .code = "CredentialsFetchFailed",
         .message = fmt::format("{}: HTTP {}", source, response->status)},
        response->status});
  }
  return std::move(*response);
}

std::expected<Credentials, AwsError> parse_document(std::string_view body,
                                                    std::string_view source) {
  const auto doc = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) {
    return std::unexpected(
        credentials_invalid(fmt::format("{}: answer is not a JSON object", source)));
  }
  Credentials out{.access_key_id = string_field(doc, "AccessKeyId"),
                  .secret_access_key = string_field(doc, "SecretAccessKey"),
                  .session_token = string_field(doc, "Token")};
  if (out.access_key_id.empty() || out.secret_access_key.empty()) {
    return std::unexpected(credentials_invalid(
        fmt::format("{}: answer lacks AccessKeyId or SecretAccessKey", source)));
  }
  if (doc.contains("Expiration")) {
    out.expiration = parse_iso8601(string_field(doc, "Expiration"));
    if (!out.expiration) {
      return std::unexpected(
          credentials_invalid(fmt::format("{}: Expiration is not an ISO-8601 time", source)));
    }
  }
  return out;
}

std::optional<std::chrono::system_clock::time_point> parse_iso8601(std::string_view text) {
  int year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0;
  if (text.size() < 20 || text[4] != '-' || text[7] != '-' ||
      (text[10] != 'T' && text[10] != 't') || text[13] != ':' || text[16] != ':' ||
      !read_int(text, 0, 4, year) || !read_int(text, 5, 2, month) || !read_int(text, 8, 2, day) ||
      !read_int(text, 11, 2, hour) || !read_int(text, 14, 2, minute) ||
      !read_int(text, 17, 2, second)) {
    return std::nullopt;
  }
  std::size_t pos = 19;
  if (text[pos] == '.') {  // fractions of a second do not matter for expiry
    ++pos;
    while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9') ++pos;
  }
  std::chrono::minutes offset{0};
  const auto zone = text.substr(pos);
  if (zone == "Z" || zone == "z") {
  } else if (zone.size() == 6 && (zone[0] == '+' || zone[0] == '-') && zone[3] == ':') {
    int oh = 0, om = 0;
    if (!read_int(zone, 1, 2, oh) || !read_int(zone, 4, 2, om) || oh < 0 || oh > 23 || om < 0 ||
        om > 59) {
      return std::nullopt;
    }
    offset = std::chrono::hours{oh} + std::chrono::minutes{om};
    if (zone[0] == '-') offset = -offset;
  } else {
    return std::nullopt;
  }
  const std::chrono::year_month_day ymd{std::chrono::year{year},
                                        std::chrono::month{static_cast<unsigned>(month)},
                                        std::chrono::day{static_cast<unsigned>(day)}};
  if (!ymd.ok() || hour < 0 || hour > 23 || minute < 0 || minute > 59 || second < 0 ||
      second > 60) {
    return std::nullopt;
  }
  return to_system_time(std::chrono::sys_days{ymd} + std::chrono::hours{hour} +
                        std::chrono::minutes{minute} + std::chrono::seconds{second} - offset);
}

}  // namespace ic::aws::credentials_http
