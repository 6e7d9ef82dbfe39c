// HttpTransport over libcurl: one easy handle per (transport, thread), reused so that
// consecutive requests from a thread travel over the same kept-alive connection.
//
//   CurlHttpTransport transport;
//   auto reply = transport.send({.method = "POST", .url = url, .headers = h, .body = b},
//                               {.connect = 1s, .total = 5s});
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "core/thread_annotations.hpp"
#include "http/http_transport.hpp"

namespace ic::http {

// Thread-safety: send() may be called concurrently; each thread gets its own handle, created
// on first use and owned by the transport (connections close when the transport is destroyed).
// Ownership: the transport must outlive every send() call; destroy it only when no thread is
// inside send(). Redirects are not followed; TLS peers are always verified, with the system CA
// store or `tls.ca_file`, and `tls` adds a client certificate for mutual TLS. The files are
// read by libcurl at each new connection, so replaced files apply to the next handshake.
class CurlHttpTransport final : public HttpTransport {
 public:
  explicit CurlHttpTransport(TlsClientFiles tls = {});
  ~CurlHttpTransport() override;
  CurlHttpTransport(const CurlHttpTransport&) = delete;
  CurlHttpTransport& operator=(const CurlHttpTransport&) = delete;

  [[nodiscard]] std::expected<HttpResponse, TransportError> send(
      const HttpRequest& request, const HttpTimeouts& timeouts) override;

 private:
  struct Handle;
  Handle& handle_for_this_thread();

  const std::uint64_t id_;  // never reused, so a thread's cache cannot confuse two transports
  const TlsClientFiles tls_;
  Mutex mutex_;
  std::vector<std::unique_ptr<Handle>> handles_ GUARDED_BY(mutex_);
};

}  // namespace ic::http
