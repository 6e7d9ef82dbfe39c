// The loop's stall detector and heartbeat: a turn longer than the threshold (a timer, a posted
// item, a resumed coroutine, a descriptor's handler) is reported with what ran, a shorter one
// is not, a wait in epoll is no turn; the heartbeat reports how late it fired and stamps when.
#include <gtest/gtest.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <string>
#include <thread>
#include <vector>

#include "core/task_locals.hpp"
#include "event/event_loop.hpp"
#include "event/loop_heartbeat.hpp"
#include "event/wait_queue.hpp"
#include "testing/clocks.hpp"

namespace ic::event {
namespace {

using namespace std::chrono_literals;
using testing::ManualSteadyClock;

struct Recorded {
  std::string what;
  std::chrono::nanoseconds took;
};

class RecordingObserver final : public LoopObserver {
 public:
  void on_stall(std::string_view what, std::chrono::nanoseconds took) override {
    stalls.push_back({std::string(what), took});
  }
  void on_lag(std::chrono::nanoseconds lag) override { lags.push_back(lag); }
  std::vector<Recorded> stalls;
  std::vector<std::chrono::nanoseconds> lags;
};

struct StalledLoop : ::testing::Test {
  StalledLoop() { loop.observe(&observer); }
  ManualSteadyClock clock;
  EventLoop loop{clock};
  RecordingObserver observer;
};

TEST_F(StalledLoop, ATimerLongerThanTheThresholdIsReportedWithWhatRan) {
  loop.add_timer(clock.now(), [this] { clock.advance(150ms); });
  loop.add_timer(clock.now(), [this] { clock.advance(100ms); });  // not longer: no stall
  loop.run_ready();
  ASSERT_EQ(observer.stalls.size(), 1U);
  EXPECT_EQ(observer.stalls[0].took, 150ms);
  EXPECT_TRUE(observer.stalls[0].what.starts_with("timer ")) << observer.stalls[0].what;
  // The lambda's demangled type names the code that added it.
  EXPECT_NE(observer.stalls[0].what.find("ATimerLongerThanTheThreshold"), std::string::npos)
      << observer.stalls[0].what;
}

TEST_F(StalledLoop, APostedItemIsReported) {
  loop.post([this] { clock.advance(20ms); });
  loop.post([this] { clock.advance(300ms); });
  loop.run_ready();
  ASSERT_EQ(observer.stalls.size(), 1U);
  EXPECT_EQ(observer.stalls[0].took, 300ms);
  EXPECT_TRUE(observer.stalls[0].what.starts_with("posted ")) << observer.stalls[0].what;
}

TEST_F(StalledLoop, AResumedCoroutineIsReportedWithItsMessage) {
  WaitQueue queue(loop);
  auto task = [&]() -> Task<void> {
    task_locals().message_id = "m-1";
    co_await queue.wait();
    clock.advance(200ms);
  };
  spawn(task());
  loop.run_ready();
  queue.notify_all();
  loop.run_ready();
  ASSERT_EQ(observer.stalls.size(), 1U);
  EXPECT_EQ(observer.stalls[0].took, 200ms);
  EXPECT_EQ(observer.stalls[0].what, "coroutine of message m-1");
}

class SlowHandler final : public FdHandler {
 public:
  explicit SlowHandler(ManualSteadyClock& clock) : clock_(clock) {}
  void on_ready(int fd, std::uint32_t /*events*/) override {
    std::uint64_t count = 0;
    [[maybe_unused]] const auto got = read(fd, &count, sizeof count);
    clock_.advance(120ms);
  }

 private:
  ManualSteadyClock& clock_;
};

TEST_F(StalledLoop, ADescriptorsHandlerIsReportedWithItsType) {
  const int fd = eventfd(1, EFD_CLOEXEC | EFD_NONBLOCK);
  ASSERT_GE(fd, 0);
  SlowHandler handler(clock);
  ASSERT_TRUE(loop.watch(fd, EPOLLIN, handler));
  loop.run_ready();
  loop.unwatch(fd);
  close(fd);
  ASSERT_EQ(observer.stalls.size(), 1U);
  EXPECT_EQ(observer.stalls[0].took, 120ms);
  const std::string& what = observer.stalls[0].what;
  EXPECT_TRUE(what.starts_with("descriptor " + std::to_string(fd) + " ")) << what;
  EXPECT_NE(what.find("SlowHandler"), std::string::npos) << what;
}

TEST_F(StalledLoop, TimeAsleepInEpollIsNoTurn) {
  bool done = false;
  loop.add_timer(clock.now() + 1h, [] {});  // the loop sleeps in epoll until woken
  std::jthread other([&] {
    std::this_thread::sleep_for(20ms);  // lets the loop reach its wait; either order passes
    clock.advance(5s);
    loop.post([&] { done = true; });
  });
  loop.run_until([&] { return done; });
  EXPECT_TRUE(observer.stalls.empty());
}

TEST_F(StalledLoop, AnUnobservedLoopReportsNothing) {
  loop.observe(nullptr);
  loop.post([this] { clock.advance(1s); });
  loop.run_ready();
  EXPECT_TRUE(observer.stalls.empty());
}

TEST(LoopHeartbeat, ReportsHowLateItFiredAndStampsWhen) {
  ManualSteadyClock clock;
  EventLoop loop(clock);
  RecordingObserver observer;
  LoopHeartbeat heartbeat(loop, 250ms, &observer);
  heartbeat.start();
  const auto started = clock.now();
  EXPECT_EQ(heartbeat.last_beat(), started);
  clock.advance(250ms);
  loop.run_ready();
  clock.advance(400ms);  // the next one was due 250 ms after the first: 150 ms late
  loop.run_ready();
  EXPECT_EQ(observer.lags, (std::vector<std::chrono::nanoseconds>{0ms, 150ms}));
  EXPECT_EQ(heartbeat.last_beat(), started + 650ms);
  // A loop that does not turn leaves the stamp where it was, however much time passes.
  clock.advance(30s);
  EXPECT_EQ(heartbeat.last_beat(), started + 650ms);
}

}  // namespace
}  // namespace ic::event
