// run's signal waiter: it stops the process at a signal, and once its thread is destroyed
// nothing it used is touched again, however late a signal comes (issue 34: the waiter outlived
// the logger, loop and container its callback used). SIGUSR2 stands in for SIGTERM, so a
// stray delivery cannot end the test binary.
#include "app/shutdown_signals.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <memory>

namespace ic::app {
namespace {

constexpr int kSignal = SIGUSR2;

struct NoFailures final : ThreadFailureObserver {
  std::atomic<int> failures{0};
  void on_thread_exception(std::string_view, std::string_view) noexcept override { ++failures; }
};

// Should the signal ever reach a thread that does not block it, it is ignored there rather
// than ending the binary (the waiter's sigtimedwait still takes a blocked one).
void ignore_stray_deliveries() {
  struct sigaction action {};
  action.sa_handler = [](int) {};
  sigemptyset(&action.sa_mask);
  sigaction(kSignal, &action, nullptr);
}

TEST(ShutdownSignals, TheCallbackRunsOnceAtTheSignal) {
  ignore_stray_deliveries();
  const ShutdownSignals signals({kSignal});
  NoFailures observer;
  std::atomic<int> seen{0};
  const std::jthread waiter = signals.on_signal([&](int signal) { seen = signal; }, observer);
  ASSERT_EQ(kill(getpid(), kSignal), 0);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (seen.load() == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_EQ(seen.load(), kSignal);
  EXPECT_EQ(observer.failures.load(), 0);
}

TEST(ShutdownSignals, ASignalAfterTheWaiterIsDestroyedReachesNothingItUsed) {
  ignore_stray_deliveries();
  const ShutdownSignals signals({kSignal});
  NoFailures observer;
  auto used = std::make_unique<std::atomic<int>>(0);  // what run's logger and loop stand for
  {
    const std::jthread waiter =
        signals.on_signal([target = used.get()](int) { target->fetch_add(1); }, observer);
  }  // joined here
  used.reset();
  ASSERT_EQ(kill(getpid(), kSignal), 0);
  // Nobody waits for the signal any more: it stays pending, for this thread to take. (Before
  // the fix the waiter lived as long as `signals`, took it and wrote to freed memory.)
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, kSignal);
  const timespec wait{5, 0};
  EXPECT_EQ(sigtimedwait(&set, nullptr, &wait), kSignal);
}

}  // namespace
}  // namespace ic::app
