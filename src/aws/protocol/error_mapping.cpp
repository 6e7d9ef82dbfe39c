#include "aws/protocol/error_mapping.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <string>

#include "aws/protocol/retry_policy.hpp"
#include "core/time.hpp"
#include "http/retry_after.hpp"

namespace ic::aws {
namespace {

std::string string_field(const nlohmann::json& body, std::initializer_list<const char*> names) {
  for (const char* name : names) {
    auto it = body.find(name);
    if (it != body.end() && it->is_string()) return it->get<std::string>();
  }
  return {};
}

bool contains_any(std::string_view text, std::initializer_list<std::string_view> needles) {
  for (auto needle : needles) {
    if (text.find(needle) != std::string_view::npos) return true;
  }
  return false;
}

// The text of the first <name>...</name>: some front ends (and moto's authentication layer)
// answer JSON-protocol requests with an XML error document.
std::string xml_element(std::string_view body, std::string_view name) {
  const std::string open = fmt::format("<{}>", name);
  const std::string close = fmt::format("</{}>", name);
  const auto start = body.find(open);
  if (start == std::string_view::npos) return {};
  const auto end = body.find(close, start + open.size());
  if (end == std::string_view::npos) return {};
  return std::string(body.substr(start + open.size(), end - start - open.size()));
}

// SQS over the JSON protocol names the legacy query-protocol error in this header,
// "AWS.SimpleQueueService.NonExistentQueue;Sender": botocore reports that code, so we do too
// (the JSON type stays in `error_type`). The fault half says whose fault it is; it only
// decides when neither code is one the retry lists know: Receiver (the service's fault) is
// retryable, Sender leaves the status-based class (permanent for a 4xx).
void apply_query_error(AwsError& error, std::string_view header) {
  const auto semicolon = header.find(';');
  // ElasticMQ puts the JSON type ("com.amazonaws.sqs#QueueDoesNotExist") in the header.
  const auto code = bare_error_type(header.substr(0, semicolon));
  const auto fault =
      semicolon == std::string_view::npos ? std::string_view{} : header.substr(semicolon + 1);
  if (code.empty()) return;
  const bool known = is_throttling_code(error.code) || is_transient_code(error.code) ||
                     is_throttling_code(code) || is_transient_code(code);
  if (is_throttling_code(code)) {
    error.error_class = ErrorClass::Throttling;
  } else if ((is_transient_code(code) && error.error_class == ErrorClass::Permanent) ||
             (!known && fault == "Receiver")) {
    error.error_class = ErrorClass::Retryable;
  }
  error.error_type = std::move(error.code);
  error.code = std::string(code);
}

}  // namespace

std::string_view bare_error_type(std::string_view raw) {
  raw = raw.substr(0, raw.find(':'));
  if (auto hash = raw.rfind('#'); hash != std::string_view::npos) raw.remove_prefix(hash + 1);
  return raw;
}

ErrorClass classify_error(std::string_view code, long http_status) {
  if (is_throttling_code(code) || http_status == 429) return ErrorClass::Throttling;
  if (is_transient_code(code)) return ErrorClass::Retryable;
  if (http_status == 500 || http_status == 502 || http_status == 503 || http_status == 504) {
    return ErrorClass::Retryable;
  }
  return ErrorClass::Permanent;
}

AwsError map_http_error(const http::HttpResponse& response) {
  AwsError error;
  error.http_status = response.status;
  error.response_body = response.body;
  const auto body = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (const auto* header = response.header("x-amzn-errortype"); header && !header->empty()) {
    error.code = bare_error_type(*header);
  } else if (body.is_object()) {
    error.code = bare_error_type(string_field(body, {"__type", "code", "Code"}));
  }
  if (body.is_object()) {
    error.message = string_field(body, {"message", "Message"});
  } else if (body.is_discarded() && response.body.starts_with("<")) {
    if (error.code.empty()) error.code = xml_element(response.body, "Code");
    error.message = xml_element(response.body, "Message");
  }
  if (error.code.empty()) error.code = fmt::format("Http{}", response.status);
  error.error_class = classify_error(error.code, error.http_status);
  if (const auto* header = response.header("x-amzn-query-error")) {
    apply_query_error(error, *header);
  }
  // A clock-skew rejection is fixed by re-signing with the corrected clock.
  if (is_clock_skew_error(error)) error.error_class = ErrorClass::Retryable;
  // DynamoDB documents that a request answered with a 5xx may or may not have succeeded.
  error.ambiguous = response.status >= 500;
  return error;
}

AwsError map_transport_error(const http::TransportError& error) {
  constexpr auto code_of = [](http::TransportFailure failure) -> const char* {
    switch (failure) {
      case http::TransportFailure::CouldNotConnect:
        return "CouldNotConnect";
      case http::TransportFailure::TimeoutBeforeSend:
        return "TimeoutBeforeSend";
      case http::TransportFailure::TimeoutAfterSend:
        return "TimeoutAfterSend";
      case http::TransportFailure::Interrupted:
        return "TransportError";
    }
    return "TransportError";
  };
  return AwsError{{.error_class = ErrorClass::Retryable,
                   .code = code_of(error.failure),
                   .message = error.detail,
                   .ambiguous = error.ambiguous()}};
}

bool is_clock_skew_error(const Error& error) {
  if (error.code == "RequestTimeTooSkewed" || error.code == "RequestExpired" ||
      error.code == "RequestInTheFuture") {
    return true;
  }
  const bool signature_error = error.code == "InvalidSignatureException" ||
                               error.code == "SignatureDoesNotMatch" || error.code == "AuthFailure";
  return signature_error &&
         contains_any(error.message, {"Signature expired", "Signature not yet current"});
}

std::optional<std::chrono::system_clock::time_point> parse_http_date(std::string_view text) {
  const auto at = http::parse_imf_fixdate(text);
  if (!at) return std::nullopt;
  return to_system_time(std::chrono::floor<std::chrono::seconds>(*at));
}

}  // namespace ic::aws
