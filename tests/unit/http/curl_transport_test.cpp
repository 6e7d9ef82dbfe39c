// CurlHttpTransport against local servers on 127.0.0.1: replies, keep-alive reuse, and the
// classification of each failure (refused, timed out before/after sending, interrupted).
#include "http/curl_transport.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <mutex>
#include <thread>

namespace ic::http {
namespace {

using namespace std::chrono_literals;

// A cpp-httplib server on a free port, stopped and joined on destruction.
class LocalServer {
 public:
  explicit LocalServer(std::function<void(httplib::Server&)> routes) {
    routes(server_);
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
    const auto deadline = std::chrono::steady_clock::now() + 5s;
    while (!server_.is_running() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(1ms);
    }
  }
  ~LocalServer() {
    server_.stop();
    thread_.join();
  }
  [[nodiscard]] std::string url(std::string_view path) const {
    return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
  }

 private:
  httplib::Server server_;
  int port_ = 0;
  std::thread thread_;
};

// A bare socket bound to a free port; listening or not, as the test needs.
class RawSocket {
 public:
  RawSocket() : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    socklen_t length = sizeof address;
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &length);
    port_ = ntohs(address.sin_port);
  }
  ~RawSocket() { ::close(fd_); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;
  [[nodiscard]] int fd() const { return fd_; }
  [[nodiscard]] std::string url() const {
    return "http://127.0.0.1:" + std::to_string(port_) + "/";
  }

 private:
  int fd_;
  int port_ = 0;
};

const HttpTimeouts kQuick{.connect = 1000ms, .total = 2000ms};

TEST(CurlHttpTransport, PostsBodyAndParsesStatusHeadersAndBody) {
  LocalServer server([](httplib::Server& s) {
    s.Post("/echo", [](const httplib::Request& request, httplib::Response& response) {
      response.status = 201;
      response.set_header("X-Amzn-RequestId", "  abc  ");
      response.set_content(request.get_header_value("Content-Type") + "|" +
                               request.get_header_value("X-Amz-Target") + "|" + request.body,
                           "text/plain");
    });
  });
  CurlHttpTransport transport;
  const auto reply = transport.send({.method = "POST",
                                     .url = server.url("/echo"),
                                     .headers = {{"content-type", "application/x-amz-json-1.0"},
                                                 {"x-amz-target", "DynamoDB_20120810.GetItem"}},
                                     .body = R"({"a":1})"},
                                    kQuick);
  ASSERT_TRUE(reply) << reply.error().detail;
  EXPECT_EQ(reply->status, 201);
  EXPECT_EQ(reply->body, R"(application/x-amz-json-1.0|DynamoDB_20120810.GetItem|{"a":1})");
  ASSERT_NE(reply->header("x-amzn-requestid"), nullptr);
  EXPECT_EQ(*reply->header("x-amzn-requestid"), "abc");
  ASSERT_NE(reply->header("content-type"), nullptr);
}

TEST(CurlHttpTransport, ReusesOneConnectionPerThread) {
  std::mutex mutex;
  std::vector<int> client_ports;
  LocalServer server([&](httplib::Server& s) {
    s.Get("/who", [&](const httplib::Request& request, httplib::Response& response) {
      std::lock_guard lock(mutex);
      client_ports.push_back(request.remote_port);
      response.set_content("ok", "text/plain");
    });
  });
  CurlHttpTransport transport;
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(transport.send({.method = "GET", .url = server.url("/who")}, kQuick));
  }
  std::thread other(
      [&] { ASSERT_TRUE(transport.send({.method = "GET", .url = server.url("/who")}, kQuick)); });
  other.join();
  std::lock_guard lock(mutex);  // the handlers wrote under it; a socket is no fence for TSan
  ASSERT_EQ(client_ports.size(), 4u);
  EXPECT_EQ(client_ports[0], client_ports[1]);
  EXPECT_EQ(client_ports[1], client_ports[2]);
  EXPECT_NE(client_ports[3], client_ports[0]);  // another thread, another handle
}

TEST(CurlHttpTransport, ErrorStatusIsAReplyNotATransportFailure) {
  LocalServer server([](httplib::Server& s) {
    s.Post("/", [](const httplib::Request&, httplib::Response& response) {
      response.status = 503;
      response.set_content("busy", "text/plain");
    });
  });
  CurlHttpTransport transport;
  const auto reply =
      transport.send({.method = "POST", .url = server.url("/"), .body = "x"}, kQuick);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 503);
  EXPECT_EQ(reply->body, "busy");
}

TEST(CurlHttpTransport, RefusedConnectionIsCouldNotConnect) {
  RawSocket bound_not_listening;
  CurlHttpTransport transport;
  const auto reply =
      transport.send({.method = "POST", .url = bound_not_listening.url(), .body = "x"}, kQuick);
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().failure, TransportFailure::CouldNotConnect);
  EXPECT_FALSE(reply.error().ambiguous());
}

TEST(CurlHttpTransport, SlowServerIsTimeoutAfterSend) {
  LocalServer server([](httplib::Server& s) {
    s.Post("/slow", [](const httplib::Request&, httplib::Response& response) {
      std::this_thread::sleep_for(1500ms);
      response.set_content("late", "text/plain");
    });
  });
  CurlHttpTransport transport;
  const auto reply = transport.send(
      {.method = "POST", .url = server.url("/slow"), .body = std::string(100000, 'x')},
      {.connect = 1000ms, .total = 300ms});
  ASSERT_FALSE(reply) << reply->status << " " << reply->body;
  EXPECT_EQ(reply.error().failure, TransportFailure::TimeoutAfterSend) << reply.error().detail;
  EXPECT_TRUE(reply.error().ambiguous());
}

TEST(CurlHttpTransport, FullAcceptQueueIsTimeoutBeforeSend) {
  // Linux drops SYNs while a listener's accept queue is full, so connect() cannot finish.
  RawSocket listener;
  ASSERT_EQ(::listen(listener.fd(), 0), 0);
  CurlHttpTransport filler_transport;
  for (int i = 0; i < 3; ++i) {
    // Each filler completes the handshake and then waits for a reply that never comes.
    std::thread([&] {
      (void)filler_transport.send({.method = "GET", .url = listener.url()},
                                  {.connect = 200ms, .total = 200ms});
    }).join();
  }
  CurlHttpTransport transport;
  const auto reply = transport.send({.method = "POST", .url = listener.url(), .body = "x"},
                                    {.connect = 300ms, .total = 2000ms});
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().failure, TransportFailure::TimeoutBeforeSend) << reply.error().detail;
  EXPECT_FALSE(reply.error().ambiguous());
}

TEST(CurlHttpTransport, ConnectionClosedAfterRequestIsInterrupted) {
  RawSocket listener;
  ASSERT_EQ(::listen(listener.fd(), 4), 0);
  std::thread hang_up([&] {
    const int connection = ::accept(listener.fd(), nullptr, nullptr);
    std::string received;
    char buffer[4096];
    while (received.find("\r\n\r\nbody") == std::string::npos) {
      const auto n = ::recv(connection, buffer, sizeof buffer, 0);
      if (n <= 0) break;
      received.append(buffer, static_cast<std::size_t>(n));
    }
    ::close(connection);
  });
  CurlHttpTransport transport;
  const auto reply =
      transport.send({.method = "POST", .url = listener.url(), .body = "body"}, kQuick);
  hang_up.join();
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().failure, TransportFailure::Interrupted) << reply.error().detail;
  EXPECT_TRUE(reply.error().ambiguous());
}

}  // namespace
}  // namespace ic::http
