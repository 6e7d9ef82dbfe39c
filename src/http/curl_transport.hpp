// The transports over libcurl. CurlTransport runs every transfer of a loop on one libcurl multi
// handle driven by the loop's epoll (curl_multi_socket_action): a thousand transfers in flight
// cost a thousand easy handles and sockets, no threads, and one ready socket wakes only its own
// transfer. BlockingTransport is the blocking port over any AsyncHttpTransport, for callers
// outside a task.
//
//   CurlTransport transport;                                  // on the consumer's loop
//   auto reply = co_await transport.send({.method = "POST", .url = url, .headers = h, .body = b},
//                                        {.connect = 1s, .total = 5s});
//   BlockingTransport blocking(transport);                    // credential fetches
#pragma once

#include <string>

#include "http/http_transport.hpp"

namespace ic::http {

// Thread-safety: AsyncHttpTransport's. Each loop that sends through a CurlTransport gets one
// multi handle per set of TLS files (an attachment of the loop, event/event_loop.hpp), whose
// easy handles and kept-alive connections serve every transport with those files and last as
// long as the loop. Ownership: holds nothing but its settings, so it may be destroyed at any
// time no task of it is running. Redirects are not followed; TLS peers are always verified,
// with the system CA bundle or `tls.ca_file` (one bundle, not both), and `tls` adds a client
// certificate for mutual TLS. The certificate and key files are read by libcurl at each new
// connection, so replaced files apply to the next handshake; the CA bundle is parsed once per
// multi handle and read again after 60 s, so a replaced one applies within a minute.
class CurlTransport final : public AsyncHttpTransport {
 public:
  explicit CurlTransport(TlsClientFiles tls = {});

  [[nodiscard]] Task<HttpResult> send(const HttpRequest& request,
                                      const HttpTimeouts& timeouts) override;

 private:
  const TlsClientFiles tls_;
  const std::string multi_key_;  // names the loop attachment serving these TLS files
};

// Thread-safety: HttpTransport's; each call runs on its thread's own loop
// (event/run_blocking.hpp). Ownership: borrows `transport`, which must outlive it.
class BlockingTransport final : public HttpTransport {
 public:
  explicit BlockingTransport(AsyncHttpTransport& transport) : transport_(transport) {}
  [[nodiscard]] HttpResult send(const HttpRequest& request, const HttpTimeouts& timeouts) override;

 private:
  AsyncHttpTransport& transport_;
};

}  // namespace ic::http
