#include "observability/admin_server.hpp"

#include <fmt/core.h>
#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <charconv>
#include <deque>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "core/thread_annotations.hpp"

namespace ic::observability {
namespace {

constexpr std::string_view kJson = "application/json";
constexpr std::string_view kPrometheusText = "text/plain; version=0.0.4; charset=utf-8";
// Connections served at once; more wait for a thread. Far above what probes and scrapes need,
// so only a flood of stalled clients reaches it, and low enough to bound their memory.
constexpr std::size_t kMaxConnectionThreads = 256;
// Connections the kernel completes before we accept them (capped by net.core.somaxconn).
constexpr int kListenBacklog = 1024;
// A slow or stalled client frees its thread after this long.
constexpr std::chrono::seconds kIoTimeout{2};

std::expected<std::uint16_t, std::string> parse_port(std::string_view text) {
  unsigned value = 0;
  const auto* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end || value > 65535) {
    return std::unexpected(fmt::format("port \"{}\" is not a number in 0..65535", text));
  }
  return static_cast<std::uint16_t>(value);
}

ReadinessResult run_check(const ReadinessCheck& check) {
  try {
    return check();
  } catch (const std::exception& e) {
    return {.ok = false, .detail = fmt::format("check threw: {}", e.what())};
  } catch (...) {
    return {.ok = false, .detail = "check threw"};
  }
}

// httplib reads a request with blocking reads on the thread its task queue gives the
// connection, so what bounds a probe's latency is whether a thread is free when it connects.
// With a fixed pool of N, N half-open connections hold every thread for the read timeout and
// a probe waits behind them (16 such clients delayed /health/live by 8 s). Here every
// connection gets its own thread, up to kMaxConnectionThreads: a probe never queues behind a
// slow client, and a stalled client costs one idle thread until the read timeout.
class ThreadPerConnection final : public httplib::TaskQueue {
 public:
  explicit ThreadPerConnection(ThreadFailureObserver* observer) : observer_(observer) {}

  void enqueue(std::function<void()> task) override {
    {
      MutexLock lock(mutex_);
      if (running_ >= kMaxConnectionThreads) {
        waiting_.push_back(std::move(task));
        return;
      }
      ++running_;
    }
    auto owned = std::make_shared<std::function<void()>>(std::move(task));
    try {
      std::thread([this, owned] { serve(std::move(*owned)); }).detach();
    } catch (const std::system_error&) {
      // No thread to be had: serve it on the accept thread rather than leak the socket.
      serve(std::move(*owned));
    }
  }

  // httplib calls this after the accept loop ended; returns once every connection is done.
  void shutdown() override {
    MutexLock lock(mutex_);
    done_.wait(mutex_, [this]() REQUIRES(mutex_) { return running_ == 0; });
  }

 private:
  // Runs `task`, then whatever waits, then gives its slot back.
  void serve(std::function<void()> task) {
    while (task) {
      run_guarded("admin-server", observer_, task);
      task = nullptr;
      MutexLock lock(mutex_);
      if (!waiting_.empty()) {
        task = std::move(waiting_.front());
        waiting_.pop_front();
      } else {
        --running_;
        // Under the lock: shutdown() may destroy this queue as soon as it sees zero.
        done_.notify_all();
      }
    }
  }

  ThreadFailureObserver* const observer_;
  Mutex mutex_;
  CondVar done_;
  std::size_t running_ GUARDED_BY(mutex_) = 0;
  std::deque<std::function<void()>> waiting_ GUARDED_BY(mutex_);
};

}  // namespace

std::expected<HostPort, std::string> parse_host_port(std::string_view text) {
  const auto invalid = [&](std::string_view why) {
    return std::unexpected(fmt::format("\"{}\" is not host:port ({})", text, why));
  };
  std::string_view host;
  std::string_view port;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close == std::string_view::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return invalid("expected [ipv6]:port");
    }
    host = text.substr(1, close - 1);
    port = text.substr(close + 2);
  } else {
    const auto colon = text.rfind(':');
    if (colon == std::string_view::npos) return invalid("missing :port");
    host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (host.contains(':')) return invalid("write an IPv6 address as [addr]:port");
  }
  if (host.empty()) return invalid("missing host");
  if (std::ranges::any_of(host,
                          [](unsigned char c) { return std::isspace(c) || std::iscntrl(c); })) {
    return invalid("host contains whitespace or control characters");
  }
  auto parsed_port = parse_port(port);
  if (!parsed_port) return invalid(parsed_port.error());
  return HostPort{.host = std::string(host), .port = *parsed_port};
}

struct AdminServer::Impl {
  Impl(HostPort address, const MetricsRegistry& metrics, ThreadFailureObserver* failures)
      : bind(std::move(address)), registry(metrics), observer(failures) {}

  // Runs every check outside the lock, so a slow check never blocks registration.
  std::pair<bool, std::string> readiness() {
    std::vector<std::pair<std::string, ReadinessCheck>> snapshot;
    {
      const MutexLock lock(checks_mutex);
      snapshot = checks;
    }
    bool ready = true;
    nlohmann::ordered_json results = nlohmann::ordered_json::object();
    for (const auto& [name, check] : snapshot) {
      ReadinessResult result = run_check(check);
      ready = ready && result.ok;
      results[name] = {{"ok", result.ok}, {"detail", std::move(result.detail)}};
      if (!result.code.empty()) results[name]["code"] = std::move(result.code);
    }
    const nlohmann::ordered_json body{{"status", ready ? "ready" : "not_ready"},
                                      {"checks", std::move(results)}};
    return {ready, body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)};
  }

  std::pair<bool, std::string> liveness() {
    ReadinessCheck check;
    {
      const MutexLock lock(checks_mutex);
      check = live_check;
    }
    if (!check) return {true, R"({"status":"live"})"};
    ReadinessResult result = run_check(check);
    if (result.ok) return {true, R"({"status":"live"})"};
    nlohmann::ordered_json body{{"status", "not_live"}, {"reason", std::move(result.detail)}};
    if (!result.code.empty()) body["code"] = std::move(result.code);
    return {false, body.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace)};
  }

  void configure() {
    server.new_task_queue = [this] { return new ThreadPerConnection(observer); };
    // One request per connection: an idle keep-alive connection would hold its thread for
    // seconds for nothing.
    server.set_keep_alive_max_count(1);
    server.set_read_timeout(kIoTimeout);
    server.set_write_timeout(kIoTimeout);
    // httplib's default sets SO_REUSEPORT, which lets a second process bind the same address
    // and receive a share of the probes meant for the first. SO_REUSEADDR alone still allows
    // a quick restart over TIME_WAIT connections but refuses a second live listener.
    server.set_socket_options([this](socket_t sock) {
      const int yes = 1;
      ::setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
      listen_socket.store(sock);  // the last one httplib tries is the one it binds
    });
    server.Get("/health/live", [this](const httplib::Request&, httplib::Response& res) {
      auto [live, body] = liveness();
      res.status = live ? 200 : 503;
      res.set_content(body, std::string(kJson));
    });
    server.Get("/health/ready", [this](const httplib::Request&, httplib::Response& res) {
      auto [ready, body] = readiness();
      res.status = ready ? 200 : 503;
      res.set_content(body, std::string(kJson));
    });
    server.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
      res.set_content(registry.render(), std::string(kPrometheusText));
    });
  }

  HostPort bind;
  const MetricsRegistry& registry;
  ThreadFailureObserver* const observer;
  httplib::Server server;

  Mutex checks_mutex;
  std::vector<std::pair<std::string, ReadinessCheck>> checks GUARDED_BY(checks_mutex);
  ReadinessCheck live_check GUARDED_BY(checks_mutex);

  Mutex lifecycle_mutex;
  bool started GUARDED_BY(lifecycle_mutex) = false;
  bool stopped GUARDED_BY(lifecycle_mutex) = false;
  std::thread thread GUARDED_BY(lifecycle_mutex);
  std::atomic<bool> listen_returned{false};
  std::atomic<socket_t> listen_socket{INVALID_SOCKET};
  std::atomic<std::uint16_t> bound_port{0};
};

AdminServer::AdminServer(HostPort bind, const MetricsRegistry& registry,
                         ThreadFailureObserver* observer)
    : impl_(std::make_unique<Impl>(std::move(bind), registry, observer)) {
  impl_->configure();
}

AdminServer::~AdminServer() {
  stop();
}

void AdminServer::add_readiness_check(std::string name, ReadinessCheck check) {
  const MutexLock lock(impl_->checks_mutex);
  auto& checks = impl_->checks;
  auto it = std::ranges::find(checks, name, &std::pair<std::string, ReadinessCheck>::first);
  if (it != checks.end()) {
    it->second = std::move(check);
  } else {
    checks.emplace_back(std::move(name), std::move(check));
  }
}

void AdminServer::set_liveness_check(ReadinessCheck check) {
  const MutexLock lock(impl_->checks_mutex);
  impl_->live_check = std::move(check);
}

std::expected<void, std::string> AdminServer::start() {
  Impl& impl = *impl_;
  const MutexLock lock(impl.lifecycle_mutex);
  if (impl.started) return std::unexpected("admin server already started");
  const std::string& host = impl.bind.host;
  const int port = impl.bind.port == 0 ? impl.server.bind_to_any_port(host)
                   : impl.server.bind_to_port(host, impl.bind.port) ? impl.bind.port
                                                                    : -1;
  if (port <= 0) {
    return std::unexpected(fmt::format("cannot listen on {}:{}", host, impl.bind.port));
  }
  // Debian's httplib listens with a backlog of 5: a burst of connections (slow clients, or
  // just many) fills it, the kernel then drops SYNs, and a probe connecting behind them waits
  // for a 1 s SYN retransmit. Linux lets listen() be called again to raise the backlog.
  ::listen(impl.listen_socket.load(), kListenBacklog);
  impl.started = true;
  impl.bound_port.store(static_cast<std::uint16_t>(port));
  impl.thread = std::thread([&impl] {
    run_guarded("admin-listener", impl.observer, [&] { impl.server.listen_after_bind(); });
    impl.listen_returned.store(true);
  });
  // httplib's stop() is a no-op until the accept loop runs, so a stop() right after start()
  // would otherwise leave the thread listening forever.
  while (!impl.server.is_running() && !impl.listen_returned.load()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return {};
}

void AdminServer::stop() {
  Impl& impl = *impl_;
  const MutexLock lock(impl.lifecycle_mutex);
  if (!impl.started || impl.stopped) return;
  impl.server.stop();
  impl.thread.join();
  impl.stopped = true;
}

std::uint16_t AdminServer::port() const noexcept {
  return impl_->bound_port.load();
}

}  // namespace ic::observability
