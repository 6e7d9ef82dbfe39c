// A cpp-httplib server on 127.0.0.1 (port 0) standing in for the bank in the adapters' unit
// tests: it records every request and answers each with the current scripted reply, which may
// be held back until the server is destroyed (to provoke client timeouts without a long sleep).
#pragma once

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "core/thread_annotations.hpp"

namespace ic::testing {

struct Reply {
  int status = 200;
  std::string body;
  bool hold_until_shutdown = false;  // answer only when the server is destroyed
};

struct RecordedRequest {
  std::string method;
  std::string path;
  std::string idempotency_key;
  std::string content_type;
  std::string body;
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
    thread_.join();
  }
  ScriptedBankServer(const ScriptedBankServer&) = delete;
  ScriptedBankServer& operator=(const ScriptedBankServer&) = delete;

  void set_reply(Reply reply) {
    MutexLock lock(mutex_);
    reply_for_ = [reply = std::move(reply)](const httplib::Request&) { return reply; };
  }

  [[nodiscard]] std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

  [[nodiscard]] std::vector<RecordedRequest> requests() const {
    MutexLock lock(mutex_);
    return requests_;
  }

 private:
  void start() {
    auto handle = [this](const httplib::Request& request, httplib::Response& response) {
      ReplyFor reply_for;
      {
        MutexLock lock(mutex_);
        requests_.push_back({request.method, request.path,
                             request.get_header_value("Idempotency-Key"),
                             request.get_header_value("Content-Type"), request.body});
        reply_for = reply_for_;
      }
      const Reply reply = reply_for(request);
      if (reply.hold_until_shutdown) {
        MutexLock lock(mutex_);
        released_.wait(mutex_, [this]() REQUIRES(mutex_) { return shutting_down_; });
      }
      response.status = reply.status;
      response.set_content(reply.body, "application/json");
    };
    // One request per connection: stop() would otherwise wait out the idle keep-alive
    // connection the client still holds (seconds per server, and tests start many).
    server_.set_keep_alive_max_count(1);
    server_.Post(".*", handle);
    server_.Get(".*", handle);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (!server_.is_running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  mutable Mutex mutex_;
  CondVar released_;
  bool shutting_down_ GUARDED_BY(mutex_) = false;
  ReplyFor reply_for_ GUARDED_BY(mutex_);
  std::vector<RecordedRequest> requests_ GUARDED_BY(mutex_);
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// A socket bound to a free loopback port but not listening: connecting to it is refused at
// once, and no other process can take the port while the test holds it.
class RefusingPort {
 public:
  RefusingPort() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
      ::close(fd_);
      throw std::runtime_error("cannot bind a loopback port");
    }
    socklen_t length = sizeof address;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~RefusingPort() { ::close(fd_); }
  RefusingPort(const RefusingPort&) = delete;
  RefusingPort& operator=(const RefusingPort&) = delete;
  [[nodiscard]] std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_;
  int port_ = 0;
};

}  // namespace ic::testing
