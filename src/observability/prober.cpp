#include "observability/prober.hpp"

#include <condition_variable>
#include <mutex>

namespace ic::observability {

Prober::Prober(Readiness& readiness, std::vector<Probe> probes, ProberConfig config,
               ThreadFailureObserver* observer)
    : readiness_(readiness), probes_(std::move(probes)), config_(config), observer_(observer) {}

bool Prober::probe_once() {
  bool all_ok = true;
  for (const Probe& probe : probes_) {
    std::expected<void, Error> result = std::unexpected(Error{.error_class = ErrorClass::Permanent,
                                                              .code = "ProbeException",
                                                              .message = "the probe threw"});
    run_guarded("prober", observer_, [&] { result = probe.run(); });
    if (result) {
      readiness_.succeeded(probe.dependency);
    } else {
      readiness_.failed(probe.dependency, result.error());
      all_ok = false;
    }
  }
  return all_ok;
}

void Prober::start() {
  thread_ = std::jthread([this](std::stop_token stop) { run(std::move(stop)); });
}

void Prober::stop() {
  if (!thread_.joinable()) return;
  thread_.request_stop();
  thread_.join();
}

void Prober::run(std::stop_token stop) {
  std::mutex mutex;
  std::condition_variable_any wake;
  while (!stop.stop_requested()) {
    bool all_ok = false;
    // probe_once guards each probe; this guards the loop's own bookkeeping.
    run_guarded("prober", observer_, [&] { all_ok = probe_once(); });
    std::unique_lock lock(mutex);
    wake.wait_for(lock, stop, all_ok ? config_.interval : config_.retry_interval,
                  [] { return false; });
  }
}

}  // namespace ic::observability
