// CurlTransport against local servers on 127.0.0.1, through BlockingTransport (a loop of the
// test's thread) and directly on a loop: replies, keep-alive reuse, the classification of each
// failure (refused, timed out before/after sending, interrupted), cancellation, many
// transfers of one loop at once, a stalled one holding up none of the others, and the pooled
// connections' sockets in the loop's epoll set (kept between transfers, dropped once their
// server closes them, their numbers reused).
#include "http/curl_transport.hpp"

#include <gtest/gtest.h>
#include <sys/socket.h>
#include <unistd.h>

#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>

#include "event/event_loop.hpp"
#include "event/wait_queue.hpp"
#include "testing/bound_socket.hpp"
#include "testing/local_http_server.hpp"
#include "testing/process_sockets.hpp"

namespace ic::http {
namespace {

using namespace std::chrono_literals;
using ic::testing::BoundSocket;
using ic::testing::epoll_registration;
using ic::testing::LocalHttpServer;
using ic::testing::socket_with_local_port;

const HttpTimeouts kQuick{.connect = 1000ms, .total = 2000ms};

// A server's side: reads from `fd` until what arrived contains `end`, or the peer closes.
void read_until(int fd, std::string_view end) {
  std::string received;
  char buffer[4096];
  while (received.find(end) == std::string::npos) {
    const auto n = ::recv(fd, buffer, sizeof buffer, 0);
    if (n <= 0) return;
    received.append(buffer, static_cast<std::size_t>(n));
  }
}

// Answers GET /who with "ok" and records the client port of each request: one port for
// several requests means one kept-alive connection.
class ClientPortServer {
 public:
  ClientPortServer()
      : server_([this](LocalHttpServer::Routes& s) {
          s.Get("/who", [this](const httplib::Request& request, httplib::Response& response) {
            std::lock_guard lock(mutex_);
            ports_.push_back(request.remote_port);
            response.set_content("ok", "text/plain");
          });
        }) {}

  [[nodiscard]] std::string url(std::string_view path) const { return server_.url(path); }
  // Read under the lock the handlers wrote under: a socket is no fence for TSan.
  [[nodiscard]] std::vector<int> client_ports() const {
    std::lock_guard lock(mutex_);
    return ports_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<int> ports_;
  LocalHttpServer server_;  // last: its threads stop before the members they use go
};

TEST(CurlTransport, PostsBodyAndParsesStatusHeadersAndBody) {
  LocalHttpServer server([](LocalHttpServer::Routes& s) {
    s.Post("/echo", [](const httplib::Request& request, httplib::Response& response) {
      response.status = 201;
      response.set_header("X-Amzn-RequestId", "  abc  ");
      response.set_content(request.get_header_value("Content-Type") + "|" +
                               request.get_header_value("X-Amz-Target") + "|" + request.body,
                           "text/plain");
    });
  });
  CurlTransport curl;
  BlockingTransport transport(curl);
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

TEST(CurlTransport, ReusesOneConnectionOnOneThread) {
  ClientPortServer server;
  CurlTransport curl;
  BlockingTransport transport(curl);
  for (int i = 0; i < 3; ++i) {
    ASSERT_TRUE(transport.send({.method = "GET", .url = server.url("/who")}, kQuick));
  }
  std::thread other(
      [&] { ASSERT_TRUE(transport.send({.method = "GET", .url = server.url("/who")}, kQuick)); });
  other.join();
  const std::vector<int> client_ports = server.client_ports();
  ASSERT_EQ(client_ports.size(), 4u);
  EXPECT_EQ(client_ports[0], client_ports[1]);
  EXPECT_EQ(client_ports[1], client_ports[2]);
  EXPECT_NE(client_ports[3], client_ports[0]);  // another thread, another handle
}

TEST(CurlTransport, ErrorStatusIsAReplyNotATransportFailure) {
  LocalHttpServer server([](LocalHttpServer::Routes& s) {
    s.Post("/", [](const httplib::Request&, httplib::Response& response) {
      response.status = 503;
      response.set_content("busy", "text/plain");
    });
  });
  CurlTransport curl;
  BlockingTransport transport(curl);
  const auto reply =
      transport.send({.method = "POST", .url = server.url("/"), .body = "x"}, kQuick);
  ASSERT_TRUE(reply);
  EXPECT_EQ(reply->status, 503);
  EXPECT_EQ(reply->body, "busy");
}

TEST(CurlTransport, RefusedConnectionIsCouldNotConnect) {
  BoundSocket bound_not_listening;
  CurlTransport curl;
  BlockingTransport transport(curl);
  const auto reply =
      transport.send({.method = "POST", .url = bound_not_listening.url("/"), .body = "x"}, kQuick);
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().failure, TransportFailure::CouldNotConnect);
  EXPECT_FALSE(reply.error().ambiguous());
}

TEST(CurlTransport, SlowServerIsTimeoutAfterSend) {
  LocalHttpServer server([](LocalHttpServer::Routes& s) {
    s.Post("/slow", [](const httplib::Request&, httplib::Response& response) {
      std::this_thread::sleep_for(1500ms);
      response.set_content("late", "text/plain");
    });
  });
  CurlTransport curl;
  BlockingTransport transport(curl);
  const auto reply = transport.send(
      {.method = "POST", .url = server.url("/slow"), .body = std::string(100000, 'x')},
      {.connect = 1000ms, .total = 300ms});
  ASSERT_FALSE(reply) << reply->status << " " << reply->body;
  EXPECT_EQ(reply.error().failure, TransportFailure::TimeoutAfterSend) << reply.error().detail;
  EXPECT_TRUE(reply.error().ambiguous());
}

TEST(CurlTransport, FullAcceptQueueIsTimeoutBeforeSend) {
  // Linux drops SYNs while a listener's accept queue is full, so connect() cannot finish.
  BoundSocket listener;
  ASSERT_EQ(::listen(listener.fd(), 0), 0);
  CurlTransport filler_curl;
  BlockingTransport filler_transport(filler_curl);
  for (int i = 0; i < 3; ++i) {
    // Each filler completes the handshake and then waits for a reply that never comes.
    std::thread([&] {
      (void)filler_transport.send({.method = "GET", .url = listener.url("/")},
                                  {.connect = 200ms, .total = 200ms});
    }).join();
  }
  CurlTransport curl;
  BlockingTransport transport(curl);
  const auto reply = transport.send({.method = "POST", .url = listener.url("/"), .body = "x"},
                                    {.connect = 300ms, .total = 2000ms});
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().failure, TransportFailure::TimeoutBeforeSend) << reply.error().detail;
  EXPECT_FALSE(reply.error().ambiguous());
}

TEST(CurlTransport, ConnectionClosedAfterRequestIsInterrupted) {
  BoundSocket listener;
  ASSERT_EQ(::listen(listener.fd(), 4), 0);
  std::thread hang_up([&] {
    const int connection = ::accept(listener.fd(), nullptr, nullptr);
    read_until(connection, "\r\n\r\nbody");
    ::close(connection);
  });
  CurlTransport curl;
  BlockingTransport transport(curl);
  const auto reply =
      transport.send({.method = "POST", .url = listener.url("/"), .body = "body"}, kQuick);
  hang_up.join();
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().failure, TransportFailure::Interrupted) << reply.error().detail;
  EXPECT_TRUE(reply.error().ambiguous());
}

TEST(CurlTransport, CancellableTransferAnswersAndKeepsItsConnection) {
  ClientPortServer server;
  CurlTransport curl;
  BlockingTransport transport(curl);
  std::stop_source never_stopped;
  for (int i = 0; i < 2; ++i) {
    const auto reply = transport.send(
        {.method = "GET", .url = server.url("/who"), .cancel = never_stopped.get_token()}, kQuick);
    ASSERT_TRUE(reply) << reply.error().detail;
    EXPECT_EQ(reply->body, "ok");
  }
  const std::vector<int> client_ports = server.client_ports();
  ASSERT_EQ(client_ports.size(), 2u);
  EXPECT_EQ(client_ports[0], client_ports[1]);
}

TEST(CurlTransport, StopEndsATransferThatIsWaitingForItsAnswer) {
  BoundSocket listener;
  ASSERT_EQ(::listen(listener.fd(), 4), 0);
  std::stop_source stop;
  std::thread silent_server([&] {
    const int connection = ::accept(listener.fd(), nullptr, nullptr);
    read_until(connection, "\r\n\r\nbody");
    stop.request_stop();  // the request has arrived; it is never answered
    char byte = 0;
    (void)::recv(connection, &byte, 1, 0);  // until the client gives up
    ::close(connection);
  });
  CurlTransport curl;
  BlockingTransport transport(curl);
  const auto reply = transport.send(
      {.method = "POST", .url = listener.url("/"), .body = "body", .cancel = stop.get_token()},
      {.connect = 1000ms, .total = 60000ms});
  silent_server.join();
  ASSERT_FALSE(reply);
  EXPECT_EQ(reply.error().failure, TransportFailure::Interrupted)
      << "cut short by the stop, not by the 60 s timeout: " << reply.error().detail;
  EXPECT_TRUE(reply.error().ambiguous()) << "the request had been sent";
}

// Sends `count` GETs of `path` on one loop at once and returns their replies in order.
std::vector<HttpResult> send_all_at_once(AsyncHttpTransport& transport, const std::string& url,
                                         int count, const HttpTimeouts& timeouts) {
  event::EventLoop loop;
  std::vector<HttpResult> replies(static_cast<std::size_t>(count));
  int finished = 0;
  auto one = [&](std::size_t i) -> Task<void> {
    const HttpRequest request{.method = "GET", .url = url};
    replies[i] = co_await transport.send(request, timeouts);
    ++finished;
  };
  loop.post([&] {
    for (std::size_t i = 0; i < replies.size(); ++i) spawn(one(i));
  });
  loop.run_until([&] { return finished == count; });
  return replies;
}

TEST(CurlTransport, ManyTransfersOfOneLoopRunAtOnce) {
  // Each answer waits until all six requests have arrived: one at a time, none would finish
  // (six: the server's pool has eight threads, each request holds one).
  std::mutex mutex;
  std::condition_variable all_arrived;
  int arrived = 0;
  constexpr int kTogether = 6;
  LocalHttpServer server([&](LocalHttpServer::Routes& s) {
    s.Get("/together", [&](const httplib::Request&, httplib::Response& response) {
      std::unique_lock lock(mutex);
      ++arrived;
      all_arrived.notify_all();
      all_arrived.wait_for(lock, 5s, [&] { return arrived >= kTogether; });
      response.set_content(arrived >= kTogether ? "together" : "alone", "text/plain");
    });
  });
  CurlTransport transport;
  const auto replies = send_all_at_once(transport, server.url("/together"), kTogether,
                                        {.connect = 1s, .total = 10s});
  for (const auto& reply : replies) {
    ASSERT_TRUE(reply) << reply.error().detail;
    EXPECT_EQ(reply->body, "together");
  }
}

TEST(CurlTransport, AStalledTransferHoldsUpNoOther) {
  BoundSocket silent;  // accepts (the kernel's backlog) and never answers
  ASSERT_EQ(::listen(silent.fd(), 4), 0);
  ClientPortServer server;
  CurlTransport transport;
  event::EventLoop loop;
  std::stop_source stop;
  std::optional<HttpResult> stalled;
  std::vector<HttpResult> quick;
  auto stall = [&]() -> Task<void> {
    const HttpRequest request{.method = "GET", .url = silent.url("/"), .cancel = stop.get_token()};
    stalled = co_await transport.send(request, {.connect = 1s, .total = 60s});
  };
  auto answer = [&]() -> Task<void> {
    const HttpRequest request{.method = "GET", .url = server.url("/who")};
    quick.push_back(co_await transport.send(request, kQuick));
    if (quick.size() == 5) stop.request_stop();  // on the loop: ends the stalled one
  };
  loop.post([&] {
    spawn(stall());
    for (int i = 0; i < 5; ++i) spawn(answer());
  });
  loop.run_until([&] { return stalled.has_value(); });
  ASSERT_EQ(quick.size(), 5u) << "the stalled transfer ended before the others answered";
  for (const auto& reply : quick) {
    ASSERT_TRUE(reply) << reply.error().detail;
    EXPECT_EQ(reply->body, "ok");
  }
  ASSERT_FALSE(*stalled);
  EXPECT_EQ(stalled->error().failure, TransportFailure::Interrupted) << stalled->error().detail;
}

// One GET on `loop`, run until it answers.
HttpResult get_on(event::EventLoop& loop, AsyncHttpTransport& transport, const std::string& url) {
  std::optional<HttpResult> reply;
  auto one = [&]() -> Task<void> {
    const HttpRequest request{.method = "GET", .url = url};
    reply = co_await transport.send(request, kQuick);
  };
  loop.post([&] { spawn(one()); });
  loop.run_until([&] { return reply.has_value(); });
  return *reply;
}

// One GET on `loop` that must answer `body`.
void expect_answer(event::EventLoop& loop, AsyncHttpTransport& transport, const std::string& url,
                   std::string_view body) {
  const auto reply = get_on(loop, transport, url);
  ASSERT_TRUE(reply) << reply.error().detail;
  EXPECT_EQ(reply->body, body);
}

TEST(CurlTransport, APooledConnectionStaysInTheEpollSetFromOneTransferToTheNext) {
  ClientPortServer server;
  CurlTransport transport;
  event::EventLoop loop;
  ASSERT_TRUE(get_on(loop, transport, server.url("/who")));
  const int fd = socket_with_local_port(server.client_ports().at(0));
  ASSERT_GE(fd, 0);
  const std::optional<std::string> idle = epoll_registration(fd);
  ASSERT_TRUE(idle) << "the pooled connection left the epoll set when its transfer ended";

  ASSERT_TRUE(get_on(loop, transport, server.url("/who")));
  ASSERT_EQ(server.client_ports().at(1), server.client_ports().at(0)) << "the connection is reused";
  EXPECT_EQ(epoll_registration(fd), idle) << "removed and added again in between";
}

// A raw HTTP/1.1 server on a thread: answers each request on its connection with `bodies` in
// turn, keeping the connection open, until the test says to close it; then accepts the next
// connection and answers there. No request is left unanswered unless the script says so.
class ClosingServer {
 public:
  ClosingServer() {
    if (::listen(listener_.fd(), 4) != 0) throw std::runtime_error("listen failed");
  }
  ~ClosingServer() {
    if (thread_.joinable()) thread_.join();
  }
  ClosingServer(const ClosingServer&) = delete;
  ClosingServer& operator=(const ClosingServer&) = delete;

  [[nodiscard]] std::string url() const { return listener_.url("/"); }

  // Connection 1 answers `first` requests, then (after `close_first` is fulfilled) reads
  // `unanswered` more and closes without answering them; connection 2 answers one request.
  void run(int first, std::future<void> close_first, int unanswered) {
    thread_ = std::thread([this, first, unanswered, close = std::move(close_first)]() mutable {
      const int one = ::accept(listener_.fd(), nullptr, nullptr);
      for (int i = 0; i < first; ++i) {
        read_request(one);
        answer(one, "one");
      }
      close.wait();
      for (int i = 0; i < unanswered; ++i) read_request(one);
      ::close(one);
      closed_.set_value();
      const int two = ::accept(listener_.fd(), nullptr, nullptr);
      read_request(two);
      answer(two, "two");
      char buffer[64];
      (void)::recv(two, buffer, sizeof buffer, 0);  // until the client hangs up
      ::close(two);
    });
  }
  std::future<void> closed() { return closed_.get_future(); }

 private:
  static void read_request(int fd) { read_until(fd, "\r\n\r\n"); }
  static void answer(int fd, std::string_view body) {
    const std::string reply = "HTTP/1.1 200 OK\r\nContent-Length: " + std::to_string(body.size()) +
                              "\r\n\r\n" + std::string(body);
    (void)::send(fd, reply.data(), reply.size(), MSG_NOSIGNAL);
  }

  BoundSocket listener_;
  std::promise<void> closed_;
  std::thread thread_;
};

// The server closes a pooled connection while no transfer uses it: the readable socket is
// reported once and leaves the set (a level-triggered report nobody reads would wake the loop
// on every pass), and the next transfer goes out on a new connection.
TEST(CurlTransport, AnIdleConnectionItsServerClosesNeitherSpinsTheLoopNorFailsTheNextTransfer) {
  ClosingServer server;
  std::promise<void> close_first;
  std::future<void> closed = server.closed();
  server.run(/*first=*/1, close_first.get_future(), /*unanswered=*/0);
  CurlTransport transport;
  event::EventLoop loop;
  expect_answer(loop, transport, server.url(), "one");

  close_first.set_value();
  closed.wait();
  int passes = 0;
  bool waited = false;
  loop.add_timer(loop.now() + 200ms, [&] { waited = true; });
  loop.run_until([&] {
    ++passes;
    return waited;
  });
  EXPECT_LT(passes, 20) << "the loop spun on the closed connection";

  expect_answer(loop, transport, server.url(), "two");
}

// The server reads a request on a reused connection and closes it without an answer: libcurl
// sends it again on a new connection (nothing came back, so nothing can have been answered),
// whose socket may take the closed one's number; the transfer still ends with the answer.
TEST(CurlTransport, ARequestOnAReusedConnectionTheServerDropsGoesOutAgainOnANewOne) {
  ClosingServer server;
  std::promise<void> close_first;
  close_first.set_value();
  server.run(/*first=*/1, close_first.get_future(), /*unanswered=*/1);
  CurlTransport transport;
  event::EventLoop loop;
  expect_answer(loop, transport, server.url(), "one");
  expect_answer(loop, transport, server.url(), "two");
}

TEST(CurlTransport, WithoutALoopItAnswersAnErrorNotACrash) {
  CurlTransport transport;
  const HttpRequest request{.method = "GET", .url = "http://127.0.0.1:1/"};
  std::optional<HttpResult> reply;
  auto sender = [&]() -> Task<void> { reply = co_await transport.send(request, kQuick); };
  spawn(sender());
  ASSERT_TRUE(reply.has_value());
  ASSERT_FALSE(*reply);
  EXPECT_EQ(reply->error().failure, TransportFailure::CouldNotConnect);
  EXPECT_EQ(reply->error().detail, "no event loop runs on this thread");
}

}  // namespace
}  // namespace ic::http
