// A LocalHttpServer standing in for the bank in the adapters' unit tests: it records every
// request and answers each with the current scripted reply, which may be held back until the
// server is destroyed (to provoke client timeouts without a long sleep).
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "core/thread_annotations.hpp"
#include "testing/local_http_server.hpp"

namespace ic::testing {

struct Reply {
  int status = 200;
  std::string body;
  bool hold_until_shutdown = false;  // answer only when the server is destroyed
  std::vector<std::pair<std::string, std::string>> headers;  // extra reply headers
};

class ScriptedBankServer {
 public:
  // `reply_for` may compute the reply from the request (e.g. echo it); called under no lock.
  using ReplyFor = std::function<Reply(const httplib::Request&)>;

  explicit ScriptedBankServer(Reply reply = {}) {
    set_reply(std::move(reply));
    start();
  }
  explicit ScriptedBankServer(ReplyFor reply_for) : reply_for_(std::move(reply_for)) { start(); }

  ~ScriptedBankServer() {
    {
      MutexLock lock(mutex_);
      shutting_down_ = true;
    }
    released_.notify_all();
    server_.stop();
  }
  ScriptedBankServer(const ScriptedBankServer&) = delete;
  ScriptedBankServer& operator=(const ScriptedBankServer&) = delete;

  void set_reply(Reply reply) {
    MutexLock lock(mutex_);
    reply_for_ = [reply = std::move(reply)](const httplib::Request&) { return reply; };
  }

  [[nodiscard]] std::string base_url() const { return server_.url(); }

  [[nodiscard]] std::vector<RecordedRequest> requests() const { return server_.requests(); }

 private:
  void start() {
    auto handle = [this](const httplib::Request& request, httplib::Response& response) {
      ReplyFor reply_for;
      {
        MutexLock lock(mutex_);
        reply_for = reply_for_;
      }
      const Reply reply = reply_for(request);
      if (reply.hold_until_shutdown) {
        MutexLock lock(mutex_);
        released_.wait(mutex_, [this]() REQUIRES(mutex_) { return shutting_down_; });
      }
      response.status = reply.status;
      for (const auto& [name, value] : reply.headers) response.set_header(name, value);
      response.set_content(reply.body, "application/json");
    };
    // The client keeps its connection open longer than the server lives (seconds to stop
    // each server otherwise, and tests start many).
    server_.close_connections_after_each_request();
    server_.routes().Post(".*", handle).Get(".*", handle);
    server_.start();
  }

  mutable Mutex mutex_;
  CondVar released_;
  bool shutting_down_ GUARDED_BY(mutex_) = false;
  ReplyFor reply_for_ GUARDED_BY(mutex_);
  LocalHttpServer server_;
};

}  // namespace ic::testing
