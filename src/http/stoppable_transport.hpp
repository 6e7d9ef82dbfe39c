// A blocking HttpTransport whose requests all carry one stop token, so that stop() ends every
// transfer in flight at once (a credential refresh on its own thread when the process stops)
// instead of leaving the stop to wait out the transfer's timeout.
//
//   http::StoppableTransport fetches(blocking);   // the credential providers' transport
//   ...
//   fetches.stop();                               // then join the thread that fetches
#pragma once

#include <stop_token>

#include "http/http_transport.hpp"

namespace ic::http {

// Thread-safety: the target's; stop() from any thread. A request's own `cancel` is replaced.
// Ownership: borrows `target`, which must outlive it.
class StoppableTransport final : public HttpTransport {
 public:
  explicit StoppableTransport(HttpTransport& target) : target_(target) {}

  [[nodiscard]] HttpResult send(const HttpRequest& request, const HttpTimeouts& timeouts) override {
    if (stop_.stop_requested()) {
      return std::unexpected(
          TransportError{.failure = TransportFailure::CouldNotConnect, .detail = "stopping"});
    }
    HttpRequest stoppable = request;
    stoppable.cancel = stop_.get_token();
    return target_.send(stoppable, timeouts);
  }
  // Ends the transfers in flight (CouldNotConnect or Interrupted) and refuses new ones.
  void stop() { stop_.request_stop(); }
  // Requested by stop(): for the fetches that are not HTTP transfers (credential_process).
  [[nodiscard]] std::stop_token token() const { return stop_.get_token(); }

 private:
  HttpTransport& target_;
  std::stop_source stop_;
};

}  // namespace ic::http
