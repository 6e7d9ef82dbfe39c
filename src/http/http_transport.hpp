// The HTTP transport ports: AsyncHttpTransport, awaited on an event loop, which the AWS clients
// and the bank adapters use; HttpTransport, blocking, for the few callers outside any task (the
// credential providers' fetches).
#pragma once

#include <chrono>
#include <expected>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "core/task.hpp"

namespace ic::http {

using Headers = std::vector<std::pair<std::string, std::string>>;

struct HttpRequest {
  std::string method;  // GET, POST, PUT
  std::string url;     // absolute: scheme://host[:port]/path[?query]
  Headers headers;
  std::string body;
  // Once stop is requested the transfer is abandoned (TransportFailure::Interrupted when the
  // request had left, so callers treat it as ambiguous); a default token never stops.
  std::stop_token cancel;
};

struct HttpResponse {
  long status = 0;
  Headers headers;  // names lower-cased
  std::string body;

  [[nodiscard]] const std::string* header(std::string_view lower_name) const {
    for (const auto& [name, value] : headers) {
      if (name == lower_name) return &value;
    }
    return nullptr;
  }
};

enum class TransportFailure {
  CouldNotConnect,    // DNS, refused, TLS handshake: the request never left; safe to retry
  TimeoutBeforeSend,  // connect timeout: never left
  TimeoutAfterSend,   // sent, no complete answer in time: the effect may have happened
  Interrupted,        // connection dropped after sending: the effect may have happened
};

struct TransportError {
  TransportFailure failure = TransportFailure::CouldNotConnect;
  std::string detail;
  // The TLS handshake failed over certificates (always with CouldNotConnect): the peer refused
  // ours with a TLS alert (bad_certificate, certificate_required, unknown_ca, ...), the peer's
  // could not be verified against our CA file, or our certificate or key file is unusable.
  // Nothing was processed, and a retry fails the same way until the configuration changes.
  bool tls_refused = false;
  [[nodiscard]] bool ambiguous() const {
    return failure == TransportFailure::TimeoutAfterSend ||
           failure == TransportFailure::Interrupted;
  }
};

// Client-side TLS material, for peers that require mutual TLS (the bank). Empty fields keep
// libcurl's defaults: no client certificate, the system CA store.
struct TlsClientFiles {
  std::string cert_file;  // PEM client certificate (chain); needs key_file
  std::string key_file;   // PEM private key, unencrypted
  std::string ca_file;    // PEM bundle that verifies the server instead of the system store
};

struct HttpTimeouts {
  std::chrono::milliseconds connect{2000};
  std::chrono::milliseconds total{10000};
};

using HttpResult = std::expected<HttpResponse, TransportError>;

// Thread-safety: send() is called, and its task awaited at once, on an event loop's thread
// (event/event_loop.hpp): any number of transfers of any number of loops at a time, each on
// the loop that started it. A stalled transfer holds up nothing but its own task. The request
// and the timeouts are read until the task finishes, so they live in the awaiting frame.
// Cancellation: once `request.cancel` is requested (on the loop's thread) the transfer ends
// with CouldNotConnect, or Interrupted when the request had left.
// Ownership: the transport must outlive the tasks it returned.
class AsyncHttpTransport {
 public:
  virtual ~AsyncHttpTransport() = default;
  [[nodiscard]] virtual Task<HttpResult> send(const HttpRequest& request,
                                              const HttpTimeouts& timeouts) = 0;
};

// Thread-safety: send() may be called concurrently from many threads, none of them inside a
// task of the consumer's loop (it blocks its thread). Ownership: as AsyncHttpTransport.
class HttpTransport {
 public:
  virtual ~HttpTransport() = default;
  [[nodiscard]] virtual HttpResult send(const HttpRequest& request,
                                        const HttpTimeouts& timeouts) = 0;
};

}  // namespace ic::http
