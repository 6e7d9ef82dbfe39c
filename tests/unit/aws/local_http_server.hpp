// Test helper: a cpp-httplib server on 127.0.0.1 with a kernel-chosen port, serving on its own
// thread from start() until destruction, recording every request it answered.
#pragma once

#include <httplib.h>

#include <chrono>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_annotations.hpp"

namespace ic::aws::testing {

struct RecordedRequest {
  std::string method;
  std::string path;
  httplib::Headers headers;
  [[nodiscard]] std::string header(const std::string& name) const {
    const auto it = headers.find(name);  // httplib::Headers compares names case-insensitively
    return it == headers.end() ? std::string{} : it->second;
  }
};

class LocalHttpServer {
 public:
  LocalHttpServer() {
    // Recorded before routing, so the record exists before the client sees the answer.
    server_.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response&) {
      MutexLock lock(mutex_);
      requests_.push_back({req.method, req.path, req.headers});
      return httplib::Server::HandlerResponse::Unhandled;
    });
  }
  ~LocalHttpServer() { stop(); }
  LocalHttpServer(const LocalHttpServer&) = delete;
  LocalHttpServer& operator=(const LocalHttpServer&) = delete;

  // Register handlers here before start().
  httplib::Server& routes() { return server_; }

  void start() {
    port_ = server_.bind_to_any_port("127.0.0.1");
    if (port_ <= 0) throw std::runtime_error("cannot bind 127.0.0.1");
    // bind_to_any_port also listens: clients queue in the backlog until the loop accepts.
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    // stop() is a no-op until the accept loop runs, so wait for it or stop could hang join.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!server_.is_running()) {
      if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("server not up");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  void stop() {
    server_.stop();
    if (thread_.joinable()) thread_.join();
  }

  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  [[nodiscard]] std::vector<RecordedRequest> requests() const {
    MutexLock lock(mutex_);
    return requests_;
  }

 private:
  httplib::Server server_;
  std::thread thread_;
  int port_ = 0;
  mutable Mutex mutex_;
  std::vector<RecordedRequest> requests_ GUARDED_BY(mutex_);
};

}  // namespace ic::aws::testing
