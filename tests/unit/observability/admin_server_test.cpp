// The admin listener on 127.0.0.1 with an ephemeral port, driven by a real HTTP client; and the
// ADMIN_ADDR-style host:port parser.
#include "observability/admin_server.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <vector>

namespace ic::observability {
namespace {

using namespace std::chrono_literals;
using nlohmann::json;

httplib::Client client_for(const AdminServer& server) {
  httplib::Client client{"127.0.0.1", server.port()};
  client.set_connection_timeout(2s);
  client.set_read_timeout(5s);
  return client;
}

class AdminServerTest : public ::testing::Test {
 protected:
  AdminServerTest() {
    auto& received = registry_.counter("ic_messages_received_total", "Messages received.");
    received.with({}).inc(7);
  }
  void start() {
    const auto started = server_.start();
    ASSERT_TRUE(started.has_value()) << started.error();
    ASSERT_NE(server_.port(), 0);
  }

  MetricsRegistry registry_;
  AdminServer server_{HostPort{.host = "127.0.0.1", .port = 0}, registry_};
};

TEST_F(AdminServerTest, LivenessAnswersOk) {
  start();
  auto client = client_for(server_);
  const auto res = client.Get("/health/live");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(json::parse(res->body), json({{"status", "live"}}));
  // No keep-alive: an idle connection would hold its thread for nothing.
  EXPECT_EQ(res->get_header_value("Connection"), "close");
}

TEST_F(AdminServerTest, AFailingLivenessCheckAnswers503WithItsReason) {
  std::atomic<bool> live{false};
  server_.set_liveness_check([&] {
    return ReadinessResult{.ok = live.load(), .detail = "stuck for 16 s", .code = "LoopStalled"};
  });
  start();
  auto client = client_for(server_);
  auto res = client.Get("/health/live");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(json::parse(res->body),
            json({{"status", "not_live"}, {"reason", "stuck for 16 s"}, {"code", "LoopStalled"}}));
  live = true;
  res = client.Get("/health/live");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body), json({{"status", "live"}}));
  server_.set_liveness_check([]() -> ReadinessResult { throw std::runtime_error("boom"); });
  res = client.Get("/health/live");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 503);
}

TEST_F(AdminServerTest, MetricsServesTheRegistryAsPrometheusText) {
  start();
  auto client = client_for(server_);
  const auto res = client.Get("/metrics");
  ASSERT_TRUE(res) << httplib::to_string(res.error());
  EXPECT_EQ(res->status, 200);
  EXPECT_TRUE(res->get_header_value("Content-Type").starts_with("text/plain; version=0.0.4"));
  EXPECT_EQ(res->body, registry_.render());
  EXPECT_NE(res->body.find("\nic_messages_received_total 7\n"), std::string::npos);
}

TEST_F(AdminServerTest, UnknownPathsAndMethodsAreNotFound) {
  start();
  auto client = client_for(server_);
  for (const char* path : {"/", "/health", "/metrics/x", "/health/ready/"}) {
    const auto res = client.Get(path);
    ASSERT_TRUE(res) << path;
    EXPECT_EQ(res->status, 404) << path;
  }
  const auto post = client.Post("/metrics", "", "text/plain");
  ASSERT_TRUE(post);
  EXPECT_EQ(post->status, 404);
}

TEST_F(AdminServerTest, ReadinessWithoutChecksIsReady) {
  start();
  auto client = client_for(server_);
  const auto res = client.Get("/health/ready");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body), json::parse(R"({"status":"ready","checks":{}})"));
}

TEST_F(AdminServerTest, ReadinessFlipsFrom503To200WhenEveryCheckPasses) {
  std::atomic<bool> polling{false};
  server_.add_readiness_check("table_reachable", [] { return ReadinessResult{true, "ok"}; });
  server_.add_readiness_check("queue_polling", [&] {
    return polling.load() ? ReadinessResult{true, ""}
                          : ReadinessResult{false, "no successful receive yet"};
  });
  start();
  auto client = client_for(server_);

  auto res = client.Get("/health/ready");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->get_header_value("Content-Type"), "application/json");
  EXPECT_EQ(res->body,
            R"({"status":"not_ready","checks":{"table_reachable":{"ok":true,"detail":"ok"},)"
            R"("queue_polling":{"ok":false,"detail":"no successful receive yet"}}})");

  polling = true;
  res = client.Get("/health/ready");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  const json body = json::parse(res->body);
  EXPECT_EQ(body["status"], "ready");
  EXPECT_EQ(body["checks"]["queue_polling"]["ok"], true);
}

TEST_F(AdminServerTest, AMachineReadableCodeIsListedWhenTheCheckGivesOne) {
  server_.add_readiness_check("table", [] {
    return ReadinessResult{false, "timed out", "TimeoutAfterSend"};
  });
  server_.add_readiness_check("queue", [] { return ReadinessResult{true, ""}; });
  start();
  auto client = client_for(server_);
  const auto res = client.Get("/health/ready");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(res->body,
            R"({"status":"not_ready","checks":{"table":{"ok":false,"detail":"timed out",)"
            R"("code":"TimeoutAfterSend"},"queue":{"ok":true,"detail":""}}})");
}

// A client that connected and sent half a request line, then nothing.
class HalfOpenClient {
 public:
  explicit HalfOpenClient(std::uint16_t port) : fd_(::socket(AF_INET, SOCK_STREAM, 0)) {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = fd_ >= 0 &&
                 ::connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
                 ::send(fd_, "GET /health/li", 14, MSG_NOSIGNAL) == 14;
  }
  ~HalfOpenClient() {
    if (fd_ >= 0) ::close(fd_);
  }
  HalfOpenClient(const HalfOpenClient&) = delete;
  HalfOpenClient& operator=(const HalfOpenClient&) = delete;
  [[nodiscard]] bool connected() const { return connected_; }

 private:
  int fd_;
  bool connected_ = false;
};

// Issue 10, defect 6: with a fixed pool of 4 threads and a 2 s read timeout, 16 such clients
// delayed /health/live from 1 ms to 8 s (64 would delay it 32 s). The bound is 100 ms; the test
// takes the median of several probes so that one unlucky schedule on a loaded machine does not
// decide it, and a client timeout far below the old delay makes the old code fail clearly.
TEST_F(AdminServerTest, LivenessAnswersPromptlyWith64HalfOpenClientsConnected) {
  start();
  std::vector<std::unique_ptr<HalfOpenClient>> slow;
  for (int i = 0; i < 64; ++i) {
    slow.push_back(std::make_unique<HalfOpenClient>(server_.port()));
    ASSERT_TRUE(slow.back()->connected()) << "client " << i;
  }
  std::vector<std::chrono::milliseconds> latencies;
  for (int i = 0; i < 9; ++i) {
    httplib::Client client{"127.0.0.1", server_.port()};
    client.set_connection_timeout(1s);
    client.set_read_timeout(1s);
    const auto started = std::chrono::steady_clock::now();
    const auto res = client.Get("/health/live");
    const auto took = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::steady_clock::now() - started);
    ASSERT_TRUE(res) << "probe " << i << ": " << httplib::to_string(res.error()) << " after "
                     << took.count() << " ms";
    EXPECT_EQ(res->status, 200);
    latencies.push_back(took);
  }
  std::ranges::sort(latencies);
  EXPECT_LT(latencies[latencies.size() / 2], 100ms)
      << "median of 9 probes; slowest " << latencies.back().count() << " ms";
}

TEST_F(AdminServerTest, ACheckRegisteredAfterStartOrReplacedOrThrowingCounts) {
  start();
  auto client = client_for(server_);
  server_.add_readiness_check("flaky",
                              []() -> ReadinessResult { throw std::runtime_error("boom"); });
  auto res = client.Get("/health/ready");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  EXPECT_EQ(json::parse(res->body)["checks"]["flaky"]["detail"], "check threw: boom");

  server_.add_readiness_check("flaky", [] { return ReadinessResult{true, "recovered"}; });
  res = client.Get("/health/ready");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(json::parse(res->body)["checks"].size(), 1u);
}

TEST_F(AdminServerTest, StopIsCleanAndIdempotent) {
  start();
  const auto port = server_.port();
  server_.stop();
  server_.stop();
  httplib::Client client{"127.0.0.1", port};
  client.set_connection_timeout(1s);
  EXPECT_FALSE(client.Get("/health/live"));  // nothing listens any more
  const auto again = server_.start();
  ASSERT_FALSE(again.has_value());
  EXPECT_EQ(again.error(), "admin server already started");
}

TEST(AdminServer, StopRightAfterStartDoesNotHang) {
  MetricsRegistry registry;
  for (int i = 0; i < 10; ++i) {
    AdminServer server{HostPort{.host = "127.0.0.1", .port = 0}, registry};
    ASSERT_TRUE(server.start().has_value());
    server.stop();
  }
}

TEST(AdminServer, DestructorStopsAndNeverStartedIsHarmless) {
  MetricsRegistry registry;
  { AdminServer never_started{HostPort{.host = "127.0.0.1", .port = 0}, registry}; }
  std::uint16_t port = 0;
  {
    AdminServer server{HostPort{.host = "127.0.0.1", .port = 0}, registry};
    ASSERT_TRUE(server.start().has_value());
    port = server.port();
  }
  httplib::Client client{"127.0.0.1", port};
  client.set_connection_timeout(1s);
  EXPECT_FALSE(client.Get("/health/live"));
}

TEST(AdminServer, APortInUseIsReportedByStart) {
  MetricsRegistry registry;
  AdminServer first{HostPort{.host = "127.0.0.1", .port = 0}, registry};
  ASSERT_TRUE(first.start().has_value());
  AdminServer second{HostPort{.host = "127.0.0.1", .port = first.port()}, registry};
  const auto started = second.start();
  ASSERT_FALSE(started.has_value());
  EXPECT_EQ(started.error(), "cannot listen on 127.0.0.1:" + std::to_string(first.port()));
  EXPECT_EQ(second.port(), 0);
}

TEST(ParseHostPort, AcceptsHostAndPort) {
  const auto v4 = parse_host_port("127.0.0.1:8080");
  ASSERT_TRUE(v4.has_value());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 8080);
  EXPECT_EQ(parse_host_port("localhost:0")->port, 0);
  EXPECT_EQ(parse_host_port("0.0.0.0:65535")->port, 65535);
  const auto v6 = parse_host_port("[::1]:9090");
  ASSERT_TRUE(v6.has_value());
  EXPECT_EQ(v6->host, "::1");
  EXPECT_EQ(v6->port, 9090);
}

TEST(ParseHostPort, RejectsMalformedValuesWithAReason) {
  const std::vector<std::pair<std::string_view, std::string_view>> cases{
      {"", "missing :port"},
      {"8080", "missing :port"},
      {"127.0.0.1", "missing :port"},
      {":8080", "missing host"},
      {"127.0.0.1:", "not a number in 0..65535"},
      {"127.0.0.1:65536", "not a number in 0..65535"},
      {"127.0.0.1:80x", "not a number in 0..65535"},
      {"127.0.0.1:-1", "not a number in 0..65535"},
      {"127.0.0.1:+80", "not a number in 0..65535"},
      {"127.0.0.1:99999999999", "not a number in 0..65535"},
      {"::1:8080", "[addr]:port"},
      {"[::1]8080", "expected [ipv6]:port"},
      {"[::1]", "expected [ipv6]:port"},
      {"[]:80", "missing host"},
      {"local host:80", "whitespace or control"},
  };
  for (const auto& [text, reason] : cases) {
    const auto parsed = parse_host_port(text);
    ASSERT_FALSE(parsed.has_value()) << text;
    EXPECT_NE(parsed.error().find(reason), std::string::npos) << text << ": " << parsed.error();
    EXPECT_NE(parsed.error().find("\"" + std::string(text) + "\""), std::string::npos)
        << parsed.error();
  }
}

}  // namespace
}  // namespace ic::observability
