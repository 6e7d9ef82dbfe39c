// An HttpTransport that forwards every request to another transport, as leveldb's EnvWrapper
// does for Env: a decorator (one that rewrites or drops answers, instrumentation) derives from
// it and overrides send() to act around the forwarded call.
//
//   class LoseEveryAnswer final : public http::ForwardingTransport {
//    public:
//     using ForwardingTransport::ForwardingTransport;
//     std::expected<HttpResponse, TransportError> send(const HttpRequest& request,
//                                                      const HttpTimeouts& timeouts) override {
//       (void)ForwardingTransport::send(request, timeouts);  // the server acts on it...
//       return std::unexpected(TransportError{.failure = TransportFailure::TimeoutAfterSend});
//     }
//   };
#pragma once

#include "http/http_transport.hpp"

namespace ic::http {

// Thread-safety and blocking: those of the target. Ownership: borrows `target`, which must
// outlive the wrapper.
class ForwardingTransport : public HttpTransport {
 public:
  explicit ForwardingTransport(HttpTransport& target) : target_(target) {}

  [[nodiscard]] HttpTransport& target() const { return target_; }

  [[nodiscard]] std::expected<HttpResponse, TransportError> send(
      const HttpRequest& request, const HttpTimeouts& timeouts) override {
    return target_.send(request, timeouts);
  }

 private:
  HttpTransport& target_;
};

}  // namespace ic::http
