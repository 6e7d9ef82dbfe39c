// What the container and IMDS providers share: one metadata request with failures turned into
// classified AwsErrors, and the credentials document both endpoints serve:
//
//   {"AccessKeyId": "...", "SecretAccessKey": "...", "Token": "...",
//    "Expiration": "2026-11-30T10:00:00Z"}
#pragma once

#include <chrono>
#include <expected>
#include <optional>
#include <string_view>

#include "aws/credentials/credentials.hpp"
#include "aws/protocol/aws_error.hpp"
#include "http/http_transport.hpp"

namespace ic::aws::credentials_http {

// Metadata endpoints are link-local or loopback: they answer at once or not at all, and a
// host outside AWS must not stall start-up behind them.
inline constexpr http::HttpTimeouts kMetadataTimeouts{.connect = std::chrono::milliseconds{1000},
                                                      .total = std::chrono::milliseconds{3000}};

// Sends `request`; a transport failure or 5xx is Retryable, any other non-2xx Permanent. The
// error names `source` and the status, never the URL's credentials or the body.
[[nodiscard]] std::expected<http::HttpResponse, AwsError> fetch(http::HttpTransport& transport,
                                                                const http::HttpRequest& request,
                                                                std::string_view source);

// AccessKeyId and SecretAccessKey are required; Token and Expiration optional but Expiration
// must parse when present. `source` prefixes error messages.
[[nodiscard]] std::expected<Credentials, AwsError> parse_document(std::string_view body,
                                                                  std::string_view source);

// "YYYY-MM-DDTHH:MM:SS[.fff]Z" or "...+00:00"; other offsets are applied.
[[nodiscard]] std::optional<std::chrono::system_clock::time_point> parse_iso8601(
    std::string_view text);

}  // namespace ic::aws::credentials_http
