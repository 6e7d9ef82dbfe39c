#include "adapters/bank/bank_call.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "core/trace_context.hpp"
#include "http/retry_after.hpp"

namespace ic::bank {
namespace {

constexpr std::size_t kMaxKeyLength = 256;
constexpr std::size_t kMaxDetailLength = 200;

std::string printable_prefix(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kMaxDetailLength)) out += (c >= ' ' && c <= '~') ? c : '?';
  if (text.size() > kMaxDetailLength) out += "...";
  return out;
}

void replace_all(std::string& text, std::string_view from, std::string_view to) {
  for (auto at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
}

// The bank's own explanation, if it gave one; the account is masked before anything is cut,
// so a truncation can never leave a recognisable piece of an unmasked number behind.
std::string bank_explanation(std::string_view body, const domain::AccountId& account) {
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return {};
  for (const char* name : {"detail", "message"}) {
    const auto it = json.find(name);
    if (it == json.end() || !it->is_string()) continue;
    std::string text = it->get<std::string>();
    replace_all(text, account.value(), domain::masked(account));
    return printable_prefix(text);
  }
  return {};
}

Task<std::expected<http::HttpResponse, CallFailure>> send_request(
    http::AsyncHttpTransport& transport, const http::HttpRequest& request,
    const http::HttpTimeouts& timeouts) {
  auto reply = co_await transport.send(request, timeouts);
  if (!reply) {
    co_return std::unexpected(CallFailure{describe(reply.error()), reply.error().tls_refused});
  }
  co_return std::move(*reply);
}

// Sets the Authorization header to the token read, replacing any earlier one.
std::expected<void, CallFailure> authorize(http::HttpRequest& request,
                                           const std::expected<std::string, std::string>& bearer) {
  if (!bearer) return std::unexpected(CallFailure{"bearer token file " + bearer.error(), true});
  std::erase_if(request.headers,
                [](const auto& header) { return header.first == "Authorization"; });
  request.headers.emplace_back("Authorization", "Bearer " + *bearer);
  return {};
}

}  // namespace

bool valid_idempotency_key(std::string_view key) {
  return !key.empty() && key.size() <= kMaxKeyLength &&
         std::ranges::all_of(key, domain::rules::is_identifier_char);
}

namespace {

// Sends `request` with the token (when configured) and the trace context; a 401 to a token
// makes one re-read of the file and, when it changed, one more attempt.
Task<std::expected<http::HttpResponse, CallFailure>> send_authorized(
    http::AsyncHttpTransport& transport, const BankEndpoint& endpoint, BearerTokenFile* token,
    http::HttpRequest request) {
  // The producer's trace context as received (W3C Trace Context), so core banking and the
  // notifier can join the charge to the billing run's trace; no span of our own is made.
  if (const auto trace = current_traceparent(); !trace.empty()) {
    request.headers.emplace_back("traceparent", std::string(trace));
  }
  if (token == nullptr) co_return co_await send_request(transport, request, endpoint.timeouts());
  const auto first = token->current();
  if (auto used = authorize(request, first); !used) co_return std::unexpected(used.error());
  auto reply = co_await send_request(transport, request, endpoint.timeouts());
  if (!reply || reply->status != 401) co_return std::move(reply);
  const auto fresh = co_await token->reload();
  if (fresh && *fresh == *first) co_return std::move(reply);  // not rotated: the 401 stands
  if (auto used = authorize(request, fresh); !used) co_return std::unexpected(used.error());
  co_return co_await send_request(transport, request, endpoint.timeouts());
}

}  // namespace

Task<std::expected<http::HttpResponse, CallFailure>> post_json(
    http::AsyncHttpTransport& transport, const BankEndpoint& endpoint, BearerTokenFile* token,
    std::string_view path, std::string_view key, std::string body) {
  http::HttpRequest request{
      .method = "POST",
      .url = endpoint.url(path),
      .headers = {{"Content-Type", "application/json"},
                  {"Accept", "application/json"},
                  {"Idempotency-Key", std::string(key)}},
      .body = std::move(body),
  };
  co_return co_await send_authorized(transport, endpoint, token, std::move(request));
}

Task<std::expected<http::HttpResponse, CallFailure>> get_json(http::AsyncHttpTransport& transport,
                                                              const BankEndpoint& endpoint,
                                                              BearerTokenFile* token,
                                                              std::string_view path) {
  http::HttpRequest request{
      .method = "GET", .url = endpoint.url(path), .headers = {{"Accept", "application/json"}}};
  co_return co_await send_authorized(transport, endpoint, token, std::move(request));
}

std::optional<std::string> json_string_field(std::string_view body, std::string_view name,
                                             bool (*accept)(std::string_view)) {
  const auto json = nlohmann::json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object()) return std::nullopt;
  const auto it = json.find(name);
  if (it == json.end() || !it->is_string()) return std::nullopt;
  std::string value = it->get<std::string>();
  if (!accept(value)) return std::nullopt;
  return value;
}

std::optional<Millis> retry_after(const http::HttpResponse& response, const Clock& clock) {
  if (response.status != 429 && response.status != 503) return std::nullopt;
  const std::string* value = response.header("retry-after");
  if (value == nullptr) return std::nullopt;
  return http::parse_retry_after(*value, clock.now());
}

bool is_machine_code(std::string_view text) {
  return !text.empty() && text.size() <= 64 &&
         std::ranges::all_of(text, domain::rules::is_upper_code_char);
}

std::string describe(const http::TransportError& error) {
  std::string_view what;
  if (error.tls_refused) {
    return fmt::format("TLS handshake failed over certificates (request not sent): {}",
                       printable_prefix(error.detail));
  }
  switch (error.failure) {
    case http::TransportFailure::CouldNotConnect:
      what = "connection failed (request not sent)";
      break;
    case http::TransportFailure::TimeoutBeforeSend:
      what = "connect timed out (request not sent)";
      break;
    case http::TransportFailure::TimeoutAfterSend:
      what = "timed out after the request was sent (outcome unknown)";
      break;
    case http::TransportFailure::Interrupted:
      what = "connection dropped after the request was sent (outcome unknown)";
      break;
  }
  return fmt::format("{}: {}", what, printable_prefix(error.detail));
}

std::string describe(const http::HttpResponse& response, const domain::AccountId& account) {
  std::string out = fmt::format("HTTP {}", response.status);
  if (auto code = json_string_field(response.body, "code", is_machine_code)) out += " " + *code;
  if (auto explanation = bank_explanation(response.body, account); !explanation.empty()) {
    out += ": " + explanation;
  }
  return out;
}

}  // namespace ic::bank
