// The one place that turns an AWS reply or a transport failure into a classified AwsError
// (error type from x-amzn-ErrorType or the body's __type, message from message/Message).
//
//   if (response.status >= 300) return std::unexpected(map_http_error(response));
#pragma once

#include <chrono>
#include <optional>
#include <string_view>

#include "aws/protocol/aws_error.hpp"
#include "http/http_transport.hpp"

namespace ic::aws {

// "com.amazonaws.dynamodb.v20120810#ConditionalCheckFailedException" and the header form
// "ThrottlingException:http://internal.amazon.com/..." both give the bare type name.
[[nodiscard]] std::string_view bare_error_type(std::string_view raw);

// Classification of an error code and HTTP status per the standard retry mode.
[[nodiscard]] ErrorClass classify_error(std::string_view code, long http_status);

// A non-2xx reply as an AwsError; keeps the raw body in `response_body`.
[[nodiscard]] AwsError map_http_error(const http::HttpResponse& response);

// A failure before any reply; `ambiguous` when the request may have reached the service.
[[nodiscard]] AwsError map_transport_error(const http::TransportError& error);

// Errors caused by our clock disagreeing with the service's (RequestTimeTooSkewed,
// RequestExpired, signature errors that say the signature is expired or not yet current).
[[nodiscard]] bool is_clock_skew_error(const Error& error);

// Parses an RFC 1123 HTTP date ("Sun, 06 Nov 1994 08:49:37 GMT").
[[nodiscard]] std::optional<std::chrono::system_clock::time_point> parse_http_date(
    std::string_view text);

}  // namespace ic::aws
