// An HTTP transport that answers from a script instead of the network, recording every
// request: for unit tests of request building and reply handling (the JSON client, STS web
// identity) and the fuzz targets, whose input is the script. It is an AsyncHttpTransport whose
// tasks finish at once, and blocking() is the same script behind the blocking port, for the
// credential providers.
//
//   ScriptedTransport transport;                 // or ScriptedTransport transport({step, ...});
//   transport.answer(200, "<AssumeRoleWithWebIdentityResponse>...");
//   transport.fail(http::TransportFailure::CouldNotConnect);
//   ... code under test sends twice (through `transport` or `transport.blocking()`) ...
//   EXPECT_EQ(transport.requests().at(0).url, "https://sts.eu-west-1.amazonaws.com/");
#pragma once

#include <deque>
#include <string>
#include <vector>

#include "core/thread_annotations.hpp"
#include "http/http_transport.hpp"

namespace ic::testing {

// The AWS operation a recorded request names: its x-amz-target header as the JSON client writes
// it ("" if it has none). For the requests of any test transport, scripted or forwarding.
inline std::string target_of(const http::HttpRequest& request) {
  for (const auto& [name, value] : request.headers) {
    if (name == "x-amz-target") return value;
  }
  return {};
}

// Thread-safety: every member may be called from any thread. A send() with nothing scripted
// is answered CouldNotConnect, so a test that under-scripts fails on a value, not a crash.
// Ownership: blocking() refers to this transport, so it neither copies nor moves.
class ScriptedTransport final : public http::AsyncHttpTransport {
 public:
  // One scripted answer: a reply or a transport failure.
  using Step = http::HttpResult;

  ScriptedTransport() = default;
  explicit ScriptedTransport(std::deque<Step> script) : script_(std::move(script)) {}
  ScriptedTransport(const ScriptedTransport&) = delete;
  ScriptedTransport& operator=(const ScriptedTransport&) = delete;

  void answer(long status, std::string body) {
    MutexLock lock(mutex_);
    script_.emplace_back(http::HttpResponse{.status = status, .body = std::move(body)});
  }
  void fail(http::TransportFailure failure) {
    MutexLock lock(mutex_);
    script_.emplace_back(
        std::unexpected(http::TransportError{.failure = failure, .detail = "scripted"}));
  }
  [[nodiscard]] std::vector<http::HttpRequest> requests() const {
    MutexLock lock(mutex_);
    return requests_;
  }

  Task<http::HttpResult> send(const http::HttpRequest& request,
                              const http::HttpTimeouts& /*timeouts*/) override {
    co_return next(request);
  }
  // The same script and record, as the blocking port.
  [[nodiscard]] http::HttpTransport& blocking() { return blocking_; }

 private:
  class Blocking final : public http::HttpTransport {
   public:
    explicit Blocking(ScriptedTransport& owner) : owner_(owner) {}
    http::HttpResult send(const http::HttpRequest& request,
                          const http::HttpTimeouts& /*timeouts*/) override {
      return owner_.next(request);
    }

   private:
    ScriptedTransport& owner_;
  };

  http::HttpResult next(const http::HttpRequest& request) {
    MutexLock lock(mutex_);
    requests_.push_back(request);
    if (script_.empty()) {
      return std::unexpected(http::TransportError{.detail = "nothing scripted"});
    }
    Step step = std::move(script_.front());
    script_.pop_front();
    return step;
  }

  mutable Mutex mutex_;
  std::deque<Step> script_ GUARDED_BY(mutex_);
  std::vector<http::HttpRequest> requests_ GUARDED_BY(mutex_);
  Blocking blocking_{*this};
};

}  // namespace ic::testing
