// The plumbing both bank clients share: one JSON POST carrying an Idempotency-Key, or a GET (and
// a bearer token when configured), and failure descriptions that are safe to log (bounded,
// printable, no full account number, never the token).
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "adapters/bank/bank_endpoint.hpp"
#include "adapters/bank/bearer_token_file.hpp"
#include "core/task.hpp"
#include "core/time.hpp"
#include "domain/charge.hpp"
#include "http/http_transport.hpp"

namespace ic::bank {

// Whether `key` can travel in a header unchanged: 1-256 characters of [A-Za-z0-9._:-].
// Anything else (CR/LF above all) would let a key rewrite the request, so it never leaves.
[[nodiscard]] bool valid_idempotency_key(std::string_view key);

// Why no reply arrived; `detail` is safe to log.
struct CallFailure {
  std::string detail;
  // Our side is wrong, not the network: the token file is unusable, or the TLS handshake
  // failed over certificates. Retrying will not help until the configuration is fixed.
  bool misconfigured = false;
};

// POST {base}{path} with Content-Type: application/json, Idempotency-Key: key and, when
// `token` is given, Authorization: Bearer <token>, and traceparent when a trace context is
// current in the calling task (core/trace_context.hpp). A 401 to a token makes one re-read of
// the token file and, when the token changed (rotated since the last stat), one more attempt: a
// 401 means nothing was processed, and the Idempotency-Key makes the repeat safe anyway.
// Awaited at once on an event loop's thread: every argument but `body` is read until the task
// finishes. Precondition: valid_idempotency_key(key).
[[nodiscard]] Task<std::expected<http::HttpResponse, CallFailure>> post_json(
    http::AsyncHttpTransport& transport, const BankEndpoint& endpoint, BearerTokenFile* token,
    std::string_view path, std::string_view key, std::string body);

// GET {base}{path} with Accept: application/json, the token and traceparent as post_json sends
// them (a 401 handled the same way). Awaited at once on an event loop's thread.
[[nodiscard]] Task<std::expected<http::HttpResponse, CallFailure>> get_json(
    http::AsyncHttpTransport& transport, const BankEndpoint& endpoint, BearerTokenFile* token,
    std::string_view path);

// The string member `name` of a JSON object body when it passes `accept`; nullopt when the
// body is not JSON, not an object, lacks the member or the member is refused.
[[nodiscard]] std::optional<std::string> json_string_field(std::string_view body,
                                                           std::string_view name,
                                                           bool (*accept)(std::string_view));

// [A-Z0-9_]{1,64}: the shape of a machine code the bank sends and we store.
[[nodiscard]] bool is_machine_code(std::string_view text);

// The reply's Retry-After, when it is a 429 or a 503 carrying a valid one (bounded by
// http::kMaxRetryAfter); nullopt otherwise, a malformed header included.
[[nodiscard]] std::optional<Millis> retry_after(const http::HttpResponse& response,
                                                const Clock& clock);

// "connection failed: ...", "timed out after the request was sent (outcome unknown): ...".
[[nodiscard]] std::string describe(const http::TransportError& error);

// "HTTP 503 TRANSIENT_FAILURE: <bank's detail>": the status, the body's "code" when it is a
// machine code, and its "detail"/"message" cut to printable ASCII and 200 characters, with
// every occurrence of the account number replaced by its masked form.
[[nodiscard]] std::string describe(const http::HttpResponse& response,
                                   const domain::AccountId& account);

}  // namespace ic::bank
