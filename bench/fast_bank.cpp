// A bank for `make bench` that is not the bottleneck: the happy path of docs/design.md §5's
// core-banking and notification APIs in C++ (cpp-httplib, keep-alive, a thread pool), where
// tools/fake_bank (Python) spends a millisecond or more of its own CPU per request. No faults,
// no validation beyond the Idempotency-Key: it keys debits by that header, answers 201 the
// first time and 200 on a replay, and counts, so the bench can check no charge was debited
// twice. Not a test double for behaviour: tests use tools/fake_bank.
//
//   ic_bench_fast_bank [--threads 512]   prints {"event":"listening","port":N} on stdout
//   GET /v1/ledger -> {"stats":{"debits":N,"replays":R,"notifications":M}}
#include <httplib.h>
#include <pthread.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <csignal>
#include <iostream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <unordered_map>

namespace {

class Ledger {
 public:
  // Returns whether the key is new.
  bool debit(const std::string& key) {
    const std::scoped_lock lock(mutex_);
    const bool fresh = debits_.emplace(key, 0).second;
    if (!fresh) ++replays_;
    return fresh;
  }
  void notify() {
    const std::scoped_lock lock(mutex_);
    ++notifications_;
  }
  nlohmann::json stats() const {
    const std::scoped_lock lock(mutex_);
    return {{"debits", debits_.size()}, {"replays", replays_}, {"notifications", notifications_}};
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, int> debits_;
  long replays_ = 0;
  long notifications_ = 0;
};

}  // namespace

int main(int argc, char** argv) {
  // cpp-httplib gives each connection a pool thread for as long as it is kept alive, so the
  // pool must exceed every connection the consumers keep open (up to one per worker each).
  int threads = 512;
  CLI::App app{"Fast happy-path bank for the benchmark"};
  app.add_option("--threads", threads)->check(CLI::Range(1, 4096));
  CLI11_PARSE(app, argc, argv);

  Ledger ledger;
  httplib::Server server;
  server.new_task_queue = [threads] {
    return new httplib::ThreadPool(static_cast<size_t>(threads));
  };
  // Kept-alive connections stay open (httplib closes one after 5 requests by default, which
  // would charge the consumer a reconnect every few calls).
  server.set_keep_alive_max_count(1'000'000);
  server.set_keep_alive_timeout(60);
  // httplib writes a reply's headers and body separately; with Nagle on, the body waits for
  // the client's delayed ACK of the headers: 40 ms per bank call, most of a charge's latency.
  server.set_tcp_nodelay(true);
  server.Post("/v1/debits", [&](const httplib::Request& req, httplib::Response& res) {
    const auto key = req.get_header_value("Idempotency-Key");
    if (key.empty()) {
      res.status = 400;
      res.set_content(R"({"code":"MALFORMED_REQUEST"})", "application/json");
      return;
    }
    res.status = ledger.debit(key) ? 201 : 200;
    res.set_content(nlohmann::json{{"debitId", "DBT-" + key}}.dump(), "application/json");
  });
  server.Post("/v1/notifications", [&](const httplib::Request&, httplib::Response& res) {
    ledger.notify();
    res.status = 202;
    res.set_content("{}", "application/json");
  });
  server.Get("/v1/ledger", [&](const httplib::Request&, httplib::Response& res) {
    res.set_content(nlohmann::json{{"stats", ledger.stats()}}.dump(), "application/json");
  });
  server.Get("/health", [](const httplib::Request&, httplib::Response& res) {
    res.set_content(R"({"status":"ok"})", "application/json");
  });

  // Signals are taken by one thread with sigwait (stop() is not async-signal-safe); blocked
  // before any other thread starts, so every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  const int port = server.bind_to_any_port("127.0.0.1");
  if (port <= 0) {
    std::cerr << R"({"event":"bind_failed"})"
              << "\n";
    return 2;
  }
  std::jthread stopper([&] {
    int signal = 0;
    sigwait(&stop_signals, &signal);
    server.stop();
  });
  std::cout << nlohmann::json{{"event", "listening"}, {"port", port}}.dump() << std::endl;
  server.listen_after_bind();
  // Wakes the stopper when listening ended on its own (the signal stays pending otherwise).
  ::kill(::getpid(), SIGTERM);
  return 0;
}
