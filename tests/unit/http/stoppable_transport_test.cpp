// StoppableTransport: stop() cuts a blocking transfer in flight on another thread (a credential
// fetch at shutdown) and refuses the ones after it.
#include "http/stoppable_transport.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <latch>
#include <thread>

#include "http/curl_transport.hpp"

namespace ic::http {
namespace {

using namespace std::chrono_literals;

// A listening socket that never accepts: the kernel completes the handshake, the request is
// sent, and no answer ever comes.
class SilentPort {
 public:
  SilentPort() {
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    EXPECT_EQ(::bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof address), 0);
    EXPECT_EQ(::listen(fd_, 8), 0);
    socklen_t size = sizeof address;
    EXPECT_EQ(::getsockname(fd_, reinterpret_cast<sockaddr*>(&address), &size), 0);
    port_ = ntohs(address.sin_port);
  }
  ~SilentPort() { ::close(fd_); }
  SilentPort(const SilentPort&) = delete;
  SilentPort& operator=(const SilentPort&) = delete;
  [[nodiscard]] std::string url() const { return "http://127.0.0.1:" + std::to_string(port_); }

 private:
  int fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
  int port_ = 0;
};

// Forwards to the real transport and says when the first request went out.
class Announcing final : public HttpTransport {
 public:
  explicit Announcing(HttpTransport& target) : target_(target) {}
  HttpResult send(const HttpRequest& request, const HttpTimeouts& timeouts) override {
    token_possible = request.cancel.stop_possible();
    sending.count_down();
    return target_.send(request, timeouts);
  }
  std::latch sending{1};
  std::atomic<bool> token_possible{false};

 private:
  HttpTransport& target_;
};

TEST(StoppableTransport, StopCutsATransferInFlightAndRefusesLaterOnes) {
  SilentPort silent;
  CurlTransport curl;
  BlockingTransport blocking(curl);
  Announcing announcing(blocking);
  StoppableTransport transport(announcing);

  HttpResult result;
  std::thread fetch([&] {
    result = transport.send({.method = "GET", .url = silent.url() + "/creds"},
                            {.connect = 30s, .total = 60s});
  });
  announcing.sending.wait();
  transport.stop();  // whether the transfer has started or not, it ends now
  fetch.join();
  ASSERT_FALSE(result.has_value());
  EXPECT_TRUE(announcing.token_possible);

  const auto later = transport.send({.method = "GET", .url = silent.url()}, {});
  ASSERT_FALSE(later.has_value());
  EXPECT_EQ(later.error().failure, TransportFailure::CouldNotConnect);
  EXPECT_EQ(later.error().detail, "stopping");
}

}  // namespace
}  // namespace ic::http
