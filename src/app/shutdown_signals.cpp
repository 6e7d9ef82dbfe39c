#include "app/shutdown_signals.hpp"

namespace ic::app {

ShutdownSignals::ShutdownSignals(std::initializer_list<int> signals) {
  sigemptyset(&set_);
  for (const int signal : signals) sigaddset(&set_, signal);
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
}

std::jthread ShutdownSignals::on_signal(std::function<void(int)> stop,
                                        ThreadFailureObserver& observer) const {
  return std::jthread(
      [set = set_, stop = std::move(stop), &observer](const std::stop_token& token) {
        // A poll rather than an endless wait, so that the owner's stop request is seen.
        const timespec poll{0, 100'000'000};
        while (!token.stop_requested()) {
          const int signal = sigtimedwait(&set, nullptr, &poll);
          if (signal > 0) {
            run_guarded("signals", &observer, [&] { stop(signal); });
            return;
          }
        }
      });
}

}  // namespace ic::app
