#include "aws/json_client.hpp"

#include <fmt/format.h>

#include <random>

#include "aws/protocol/error_mapping.hpp"
#include "aws/protocol/reply_checksum.hpp"
#include "aws/sigv4/sigv4.hpp"
#include "http/url.hpp"

namespace ic::aws {
namespace {

// Random (version 4) UUID. Not a secret: it only ties the attempts of one call together.
std::string random_invocation_id() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  const std::uint64_t high = (engine() & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;
  const std::uint64_t low = (engine() & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;
  return fmt::format("{:08x}-{:04x}-{:04x}-{:04x}-{:012x}", high >> 32, (high >> 16) & 0xFFFF,
                     high & 0xFFFF, low >> 48, low & 0xFFFFFFFFFFFFULL);
}

JsonClientHooks with_defaults(JsonClientHooks hooks) {
  if (!hooks.invocation_id) hooks.invocation_id = random_invocation_id;
  return hooks;
}

AwsError malformed_reply(const http::HttpResponse& response, std::string_view what) {
  // The service answered 2xx, so a write has happened: the caller must treat it as unknown.
  return AwsError{{.error_class = ErrorClass::Retryable,
                   .code = "MalformedResponse",
                   .message = std::string(what),
                   .ambiguous = true},
                  response.status,
                  response.body};
}

}  // namespace

JsonClient::JsonClient(JsonServiceConfig config, http::AsyncHttpTransport& transport,
                       CredentialsProvider& credentials, RetryPolicy& retry, JsonClientHooks hooks)
    : config_(std::move(config)),
      url_(config_.endpoint + "/"),
      endpoint_valid_(http::parse_http_url(url_).has_value()),
      transport_(transport),
      credentials_(credentials),
      retry_(retry),
      hooks_(with_defaults(std::move(hooks))) {}

std::chrono::milliseconds JsonClient::clock_skew() const {
  return std::chrono::milliseconds(skew_ms_.load(std::memory_order_relaxed));
}

Task<JsonClient::Reply> JsonClient::call(std::string_view operation, const nlohmann::json& request,
                                         std::stop_token cancel) {
  return call_with_body(operation, request.dump(), std::move(cancel));
}

Task<JsonClient::Reply> JsonClient::call_with_body(std::string_view operation, std::string body,
                                                   std::stop_token cancel) {
  const std::string invocation_id = hooks_.invocation_id();
  RetryAttempt retry_state;
  bool ambiguous = false;
  for (int attempt = 1;; ++attempt) {
    const auto started = std::chrono::steady_clock::now();
    long http_status = 0;
    auto result =
        co_await attempt_once(operation, body, invocation_id, attempt, cancel, http_status);
    AttemptEvent event{.service = config_.service,
                       .operation = operation,
                       .attempt = attempt,
                       .result = "ok",
                       .http_status = http_status,
                       .will_retry = false,
                       .duration = std::chrono::steady_clock::now() - started};
    if (result) {
      retry_.on_success(retry_state);
      if (hooks_.observer) hooks_.observer->on_attempt(event);
      co_return std::move(result);
    }
    AwsError& error = result.error();
    ambiguous = ambiguous || error.ambiguous;
    const auto delay =
        cancel.stop_requested() ? std::nullopt : retry_.on_failure(error, attempt, retry_state);
    event.result = error.code;
    event.will_retry = delay.has_value();
    if (hooks_.observer) hooks_.observer->on_attempt(event);
    if (!delay) {
      error.ambiguous = ambiguous;
      co_return std::move(result);
    }
    const bool slept = co_await hooks_.sleeper.sleep_for(*delay, cancel);
    if (!slept) {
      error.ambiguous = ambiguous;
      co_return std::move(result);
    }
  }
}

Task<JsonClient::Reply> JsonClient::attempt_once(std::string_view operation,
                                                 const std::string& body,
                                                 const std::string& invocation_id, int attempt,
                                                 const std::stop_token& cancel, long& http_status) {
  if (!endpoint_valid_) {
    // The signer needs a URL it can split; settings validate endpoints, so this is a client
    // built around them, answered as a value rather than a throw on some worker thread.
    co_return std::unexpected(
        AwsError{{.error_class = ErrorClass::Permanent,
                  .code = "InvalidEndpoint",
                  .message = "the endpoint is not an http(s) URL with a host"}});
  }
  auto credentials = credentials_.credentials();
  if (!credentials) co_return std::unexpected(credentials.error());

  http::HttpRequest request{
      .method = "POST",
      .url = url_,
      .headers = {{"content-type", "application/x-amz-json-1.0"},
                  {"x-amz-target", fmt::format("{}.{}", config_.target_prefix, operation)},
                  {"amz-sdk-invocation-id", invocation_id},
                  {"amz-sdk-request",
                   fmt::format("attempt={}; max={}", attempt, retry_.config().max_attempts)}},
      .body = body,
      .cancel = cancel};
  sign_request(request, *credentials,
               {.region = config_.region,
                .service = config_.signing_name,
                .time = hooks_.clock.now() + clock_skew()});

  auto response = co_await transport_.send(request, config_.timeouts);
  if (!response) co_return std::unexpected(map_transport_error(response.error()));
  http_status = response->status;
  co_return read_reply(*response);
}

JsonClient::Reply JsonClient::read_reply(const http::HttpResponse& response) {
  // Checked before anything reads the body: a damaged error reply could otherwise turn into a
  // permanent ConditionalCheckFailed for a write that succeeded.
  if (config_.verify_crc32 && !reply_crc32_matches(response)) {
    return std::unexpected(crc32_check_failed(response));
  }
  if (response.status < 200 || response.status >= 300) {
    AwsError error = map_http_error(response);
    if (is_clock_skew_error(error)) learn_skew(response);
    return std::unexpected(std::move(error));
  }
  if (response.body.empty()) return nlohmann::json::object();
  auto parsed = nlohmann::json::parse(response.body, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) return std::unexpected(malformed_reply(response, "reply is not JSON"));
  // Every AWS JSON reply is an object; callers read members without checking the top level.
  if (!parsed.is_object()) {
    return std::unexpected(malformed_reply(response, "reply is not a JSON object"));
  }
  return parsed;
}

void JsonClient::learn_skew(const http::HttpResponse& response) {
  const auto* date = response.header("date");
  if (!date) return;
  const auto server_time = parse_http_date(*date);
  if (!server_time) return;
  const auto skew =
      std::chrono::duration_cast<std::chrono::milliseconds>(*server_time - hooks_.clock.now());
  skew_ms_.store(skew.count(), std::memory_order_relaxed);
}

}  // namespace ic::aws
