// The network between the consumer and a local server, for make bench: latency, and TLS.
//
// Latency: the local emulators answer in about a millisecond where AWS takes 5-20 ms, and the
// capacity model (in-flight charges = throughput x latency, docs/performance.md) is only tested
// once latency is real. Bytes from the client wait --delay-ms (or --tail-ms, for a
// --tail-fraction of the reads) before they go upstream; replies pass at once, so each
// request/response exchange gains one delay. Bytes of one connection keep their order: a read
// is never released before the one before it.
//
// TLS: with --tls-cert and --tls-key the client side speaks TLS (OpenSSL, the server
// certificate given) and the upstream stays plain HTTP, as a load balancer in front of the
// emulators would; --tls-client-ca requires and verifies client certificates, as the bank's
// mutual TLS does. The handshake itself is not delayed: the latency is added to requests only.
// So one process is both the latency and the TLS hop, and in C++ on one epoll thread it carries
// the peak run's thousands of requests a second where tools/local_stack/tls_proxy.py (asyncio)
// would not.
//
// A stand-in for a network, not a test double.
//
//   ic_bench_net_proxy --upstream-port P [--delay-ms 10] [--tail-ms 40 --tail-fraction 0.02]
//                      [--tls-cert server.pem --tls-key server-key.pem [--tls-client-ca ca.pem]]
//   prints {"event":"listening","port":N,"tls":bool} on stdout, then one line per connection:
//   {"event":"accepted"} (plain), {"event":"handshake","ok":true,"clientCertificate":bool} or
//   {"event":"handshake","ok":false,"error":"..."} (TLS): the bench counts handshakes there.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/epoll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <chrono>
#include <csignal>
#include <deque>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "client_stream.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using ic::bench::ClientStream;
using ic::bench::TlsServerContext;

struct Held {
  Clock::time_point due;
  std::string bytes;
};

// One client connection and its upstream. Bytes to the upstream wait in `held` until due;
// bytes either way that a full socket refused wait in the `pending_*` buffers.
struct Pair {
  explicit Pair(ClientStream stream) : client_stream(std::move(stream)) {}
  int client = -1;
  int upstream = -1;
  ClientStream client_stream;
  std::deque<Held> held;
  std::string pending_up;
  std::string pending_down;
  bool waiting = false;  // in Proxy::waiting_
};

int listen_loopback(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0 || listen(fd, 1024) != 0)
    return -1;
  return fd;
}

int connect_loopback(std::uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(port);
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  // Blocking connect on loopback: immediate, and keeps the loop free of a connecting state.
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) != 0) {
    close(fd);
    return -1;
  }
  const int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  ioctl(fd, FIONBIO, &one);
  return fd;
}

void announce(const nlohmann::json& event) {
  std::cout << event.dump() << std::endl;
}

class Proxy {
 public:
  Proxy(std::uint16_t upstream_port, std::chrono::microseconds delay,
        std::chrono::microseconds tail, double tail_fraction, std::optional<TlsServerContext> tls)
      : upstream_port_(upstream_port),
        delay_(delay),
        tail_(tail),
        tail_fraction_(tail_fraction),
        tls_(std::move(tls)) {}

  int run(int listener) {
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    watch(listener, EPOLLIN);
    std::vector<epoll_event> events(256);
    for (;;) {
      const int n =
          epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), timeout_ms());
      if (n < 0 && errno != EINTR) return 1;
      for (int i = 0; i < n; ++i) {
        const int fd = events[static_cast<std::size_t>(i)].data.fd;
        if (fd == listener) {
          accept_all(listener);
        } else {
          on_ready(fd);
        }
      }
      release_due();
    }
  }

 private:
  void watch(int fd, std::uint32_t events) {
    epoll_event event{};
    event.events = events;
    event.data.fd = fd;
    epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &event);
  }

  void accept_all(int listener) {
    for (;;) {
      const int client = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
      if (client < 0) return;
      const int upstream = connect_loopback(upstream_port_);
      if (upstream < 0) {
        close(client);
        continue;
      }
      const int one = 1;
      setsockopt(client, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
      auto pair = std::make_shared<Pair>(tls_ ? ClientStream(client, *tls_) : ClientStream(client));
      pair->client = client;
      pair->upstream = upstream;
      pairs_[client] = pair;
      pairs_[upstream] = pair;
      watch(client, EPOLLIN | EPOLLRDHUP);
      watch(upstream, EPOLLIN | EPOLLRDHUP);
      if (!tls_) announce({{"event", "accepted"}});
    }
  }

  std::chrono::microseconds next_delay() {
    return std::bernoulli_distribution(tail_fraction_)(random_) ? tail_ : delay_;
  }

  void on_ready(int fd) {
    const auto found = pairs_.find(fd);
    if (found == pairs_.end()) return;
    const std::shared_ptr<Pair> pair = found->second;
    if (fd == pair->client) {
      if (!read_client(*pair)) return drop(*pair);
    } else if (!read_upstream(*pair)) {
      return drop(*pair);
    }
    if (!pair->waiting &&
        (!pair->held.empty() || !pair->pending_down.empty() || pair->client_stream.retry_soon())) {
      pair->waiting = true;
      waiting_.push_back(pair);
    }
  }

  // The handshake's next step, then what the client sent, held for its delay; false once the
  // connection is over.
  bool read_client(Pair& pair) {
    ClientStream& stream = pair.client_stream;
    if (!stream.established()) {
      std::string error;
      const auto step = stream.handshake(error);
      if (step == ClientStream::Status::kClosed) {
        announce({{"event", "handshake"}, {"ok", false}, {"error", error}});
        return false;
      }
      if (step == ClientStream::Status::kWouldBlock) return true;
      announce({{"event", "handshake"},
                {"ok", true},
                {"clientCertificate", stream.client_certificate()}});
    }
    for (;;) {
      const auto got = stream.read(buffer_);
      if (got.status == ClientStream::Status::kClosed) return false;
      if (got.status == ClientStream::Status::kWouldBlock) return true;
      // In order: never due before the read ahead of it.
      auto due = Clock::now() + next_delay();
      if (!pair.held.empty() && pair.held.back().due > due) due = pair.held.back().due;
      pair.held.push_back({due, std::string(buffer_.data(), got.bytes)});
    }
  }

  // What the upstream answered, passed on at once; false once the connection is over.
  bool read_upstream(Pair& pair) {
    for (;;) {
      const ssize_t got = read(pair.upstream, buffer_.data(), buffer_.size());
      if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) return false;
      if (got < 0) return true;
      pair.pending_down.append(buffer_.data(), static_cast<std::size_t>(got));
      if (!flush_client(pair)) return false;
    }
  }

  // Writes what the upstream socket takes; false if the peer is gone.
  static bool flush_upstream(int fd, std::string& pending) {
    while (!pending.empty()) {
      const ssize_t put = write(fd, pending.data(), pending.size());
      if (put < 0) return errno == EAGAIN || errno == EINTR;
      pending.erase(0, static_cast<std::size_t>(put));
    }
    return true;
  }

  // The same towards the client, through its stream (TLS: a would-block write is repeated
  // from the same first byte, as OpenSSL requires: `pending` is only ever appended to).
  static bool flush_client(Pair& pair) {
    while (!pair.pending_down.empty()) {
      const auto put = pair.client_stream.write(pair.pending_down);
      if (put.status != ClientStream::Status::kDone)
        return put.status == ClientStream::Status::kWouldBlock;
      pair.pending_down.erase(0, put.bytes);
    }
    return true;
  }

  void release_due() {
    const auto now = Clock::now();
    std::vector<std::shared_ptr<Pair>> still;
    for (auto& pair : waiting_) {
      if (pair->upstream < 0) continue;
      // A TLS read or handshake step that stopped on a full socket: try it again.
      if (pair->client_stream.retry_soon() && !read_client(*pair)) {
        drop(*pair);
        continue;
      }
      while (!pair->held.empty() && pair->held.front().due <= now) {
        pair->pending_up.append(pair->held.front().bytes);
        pair->held.pop_front();
      }
      if (!flush_upstream(pair->upstream, pair->pending_up) || !flush_client(*pair)) {
        drop(*pair);
        continue;
      }
      pair->waiting = !pair->held.empty() || !pair->pending_up.empty() ||
                      !pair->pending_down.empty() || pair->client_stream.retry_soon();
      if (pair->waiting) still.push_back(pair);
    }
    waiting_.swap(still);
  }

  int timeout_ms() const {
    if (waiting_.empty()) return -1;
    auto soonest = Clock::time_point::max();
    for (const auto& pair : waiting_)
      if (!pair->held.empty() && pair->held.front().due < soonest) soonest = pair->held.front().due;
    if (soonest == Clock::time_point::max()) return 1;  // only a full socket: retry shortly
    const auto wait = std::chrono::ceil<std::chrono::milliseconds>(soonest - Clock::now());
    return static_cast<int>(std::max<std::int64_t>(0, wait.count()));
  }

  void drop(Pair& pair) {
    for (int* fd : {&pair.client, &pair.upstream}) {
      if (*fd < 0) continue;
      pairs_.erase(*fd);
      close(*fd);  // also leaves the epoll set
      *fd = -1;
    }
  }

  std::uint16_t upstream_port_;
  std::chrono::microseconds delay_;
  std::chrono::microseconds tail_;
  double tail_fraction_;
  std::optional<TlsServerContext> tls_;
  int epoll_ = -1;
  std::mt19937_64 random_{7};
  std::array<char, 65536> buffer_{};
  std::unordered_map<int, std::shared_ptr<Pair>> pairs_;
  std::vector<std::shared_ptr<Pair>> waiting_;
};

}  // namespace

int main(int argc, char** argv) {
  int upstream_port = 0;
  double delay_ms = 10;
  double tail_ms = 0;
  double tail_fraction = 0;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  CLI::App app{"TCP proxy adding latency to requests and, optionally, terminating TLS"};
  app.add_option("--upstream-port", upstream_port, "loopback port to forward to")
      ->required()
      ->check(CLI::Range(1, 65535));
  app.add_option("--delay-ms", delay_ms, "delay of each client read")
      ->check(CLI::Range(0.0, 60000.0));
  app.add_option("--tail-ms", tail_ms, "delay of a tail read")->check(CLI::Range(0.0, 60000.0));
  app.add_option("--tail-fraction", tail_fraction, "share of reads delayed by --tail-ms")
      ->check(CLI::Range(0.0, 1.0));
  auto* cert = app.add_option("--tls-cert", tls_cert, "serve TLS with this PEM certificate chain")
                   ->check(CLI::ExistingFile);
  auto* key = app.add_option("--tls-key", tls_key, "PEM private key of --tls-cert")
                  ->check(CLI::ExistingFile);
  cert->needs(key);
  key->needs(cert);
  app.add_option("--tls-client-ca", tls_client_ca,
                 "require client certificates signed by this PEM CA")
      ->check(CLI::ExistingFile)
      ->needs(cert);
  CLI11_PARSE(app, argc, argv);
  std::signal(SIGPIPE, SIG_IGN);  // a peer gone mid-write is a drop, not a crash

  std::optional<TlsServerContext> tls;
  if (!tls_cert.empty()) {
    auto loaded = TlsServerContext::load(tls_cert, tls_key, tls_client_ca);
    if (!loaded) {
      std::cerr << nlohmann::json{{"event", "tls_failed"}, {"error", loaded.error()}}.dump()
                << "\n";
      return 2;
    }
    tls.emplace(std::move(*loaded));
  }
  const int listener = listen_loopback(0);
  sockaddr_in bound{};
  socklen_t length = sizeof bound;
  if (listener < 0 || getsockname(listener, reinterpret_cast<sockaddr*>(&bound), &length) != 0) {
    std::cerr << R"({"event":"bind_failed"})"
              << "\n";
    return 2;
  }
  announce({{"event", "listening"}, {"port", ntohs(bound.sin_port)}, {"tls", tls.has_value()}});
  const auto us = [](double ms) { return std::chrono::microseconds(static_cast<long>(ms * 1000)); };
  Proxy proxy(static_cast<std::uint16_t>(upstream_port), us(delay_ms), us(tail_ms), tail_fraction,
              std::move(tls));
  return proxy.run(listener);
}
