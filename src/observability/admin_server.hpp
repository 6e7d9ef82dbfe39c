// Admin HTTP listener for operators and orchestrators, on its own thread so it answers while
// the workers are saturated:
//   GET /health/live  → 200 {"status":"live"}, or 503 {"status":"not_live","reason":"...",
//                       "code":"..."} while the liveness check fails
//   GET /health/ready → 200 {"status":"ready",...} or 503 {"status":"not_ready",...}, listing
//                       every readiness check:
//                       {"checks":{"<name>":{"ok":bool,"detail":"..."[,"code":"..."]}}}
//   GET /metrics      → MetricsRegistry::render(), text/plain; version=0.0.4
//   anything else     → 404
//
//   auto addr = parse_host_port(admin_addr);           // "127.0.0.1:8080", port 0 = ephemeral
//   AdminServer admin{*addr, registry};
//   admin.add_readiness_check("queue_polling", [&] { return ReadinessResult{polling.load(), ""};
//   }); if (auto started = admin.start(); !started) fail(started.error());
#pragma once

#include <cstdint>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include "core/thread_guard.hpp"
#include "observability/metrics.hpp"

namespace ic::observability {

struct HostPort {
  std::string host;  // as given: an IPv4 address, a host name, or an IPv6 address without []
  std::uint16_t port = 0;
};

// Parses "host:port" or "[ipv6]:port"; port 0..65535. The error says what is wrong with the
// value; the caller prefixes the setting's name.
[[nodiscard]] std::expected<HostPort, std::string> parse_host_port(std::string_view text);

struct ReadinessResult {
  bool ok = false;
  std::string detail;
  std::string code;  // machine-readable reason, e.g. the last error code; left out when empty
};
// Called on the admin thread on every /health/ready request: must be quick, non-blocking and
// thread-safe (typically it reads atomics the component maintains). A check that throws counts
// as not ready.
using ReadinessCheck = std::function<ReadinessResult()>;

// Thread-safety: all members may be called from any thread. Ownership: the registry and the
// observer (told about exceptions that reach a server thread) are borrowed and must outlive
// the server. The destructor stops the server.
// Each connection is served on its own thread (up to a cap), so /health/live answers at once
// however many slow or half-open clients are connected.
class AdminServer {
 public:
  AdminServer(HostPort bind, const MetricsRegistry& registry,
              ThreadFailureObserver* observer = nullptr);
  ~AdminServer();
  AdminServer(const AdminServer&) = delete;
  AdminServer& operator=(const AdminServer&) = delete;

  // Checks are reported in registration order; a name registered again replaces its check.
  // Not ready while any check fails; ready when there are none.
  void add_readiness_check(std::string name, ReadinessCheck check);
  // Decides /health/live (same contract as a readiness check; its detail is the reason).
  // Without one the process is live while this server answers; a check that throws counts as
  // not live.
  void set_liveness_check(ReadinessCheck check);

  // Binds synchronously (so a port in use is reported here) and serves on a new thread.
  [[nodiscard]] std::expected<void, std::string> start();
  // Stops listening and joins the thread; idempotent.
  void stop();
  // The bound port (the ephemeral one when asked for 0); 0 before start().
  [[nodiscard]] std::uint16_t port() const noexcept;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace ic::observability
