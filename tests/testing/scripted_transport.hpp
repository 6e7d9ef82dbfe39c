// An HttpTransport that answers from a script: each request gets the next step (a reply or a
// transport failure) and is recorded; once the script runs out, every request fails with
// CouldNotConnect. Drives the AWS clients' reply decoding without a network (unit tests, and
// the fuzz targets, whose input is the script). Not thread-safe: one caller at a time.
#pragma once

#include <deque>
#include <expected>
#include <utility>
#include <vector>

#include "http/http_transport.hpp"

namespace ic::testing {

class ScriptedTransport final : public http::HttpTransport {
 public:
  using Step = std::expected<http::HttpResponse, http::TransportError>;

  explicit ScriptedTransport(std::deque<Step> script) : script_(std::move(script)) {}

  std::expected<http::HttpResponse, http::TransportError> send(const http::HttpRequest& request,
                                                               const http::HttpTimeouts&) override {
    sent.push_back(request);
    if (script_.empty()) {
      return std::unexpected(http::TransportError{
          .failure = http::TransportFailure::CouldNotConnect, .detail = "script exhausted"});
    }
    Step next = std::move(script_.front());
    script_.pop_front();
    return next;
  }

  std::vector<http::HttpRequest> sent;

 private:
  std::deque<Step> script_;
};

}  // namespace ic::testing
