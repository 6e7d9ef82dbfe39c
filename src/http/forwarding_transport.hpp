// An AsyncHttpTransport that forwards every request to another transport, as leveldb's
// EnvWrapper does for Env: a decorator (one that rewrites or drops answers, instrumentation)
// derives from it and overrides send() to act around the forwarded call.
//
//   class LoseEveryAnswer final : public http::ForwardingTransport {
//    public:
//     using ForwardingTransport::ForwardingTransport;
//     Task<HttpResult> send(const HttpRequest& request, const HttpTimeouts& timeouts) override {
//       (void)co_await ForwardingTransport::send(request, timeouts);  // the server acts on it...
//       co_return std::unexpected(TransportError{.failure = TransportFailure::TimeoutAfterSend});
//     }
//   };
#pragma once

#include "http/http_transport.hpp"

namespace ic::http {

// Thread-safety and suspension: those of the target. Ownership: borrows `target`, which must
// outlive the wrapper.
class ForwardingTransport : public AsyncHttpTransport {
 public:
  explicit ForwardingTransport(AsyncHttpTransport& target) : target_(target) {}

  [[nodiscard]] AsyncHttpTransport& target() const { return target_; }

  [[nodiscard]] Task<HttpResult> send(const HttpRequest& request,
                                      const HttpTimeouts& timeouts) override {
    return target_.send(request, timeouts);
  }

 private:
  AsyncHttpTransport& target_;
};

}  // namespace ic::http
