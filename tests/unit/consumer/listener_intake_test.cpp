// The listener container's intake gate over the fake queue: paused means no ReceiveMessage at
// all (no receive count spent), a probe means a receive of exactly one message, and opening
// the gate again resumes full receives.
#include <gtest/gtest.h>

#include <atomic>

#include "consumer/intake_gate.hpp"
#include "consumer/listener_container.hpp"
#include "core/thread_annotations.hpp"
#include "testing/fake_queue.hpp"
#include "testing/listener_support.hpp"

namespace ic::consumer {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
using testing::FakeQueue;
using testing::RecordingObserver;
using testing::Running;

// A gate a test sets by hand, which counts what the container told it.
class ScriptedGate final : public IntakeGate {
 public:
  enum class Mode { Open, Paused, ProbeOnce };
  void set(Mode mode) {
    MutexLock lock(mutex_);
    mode_ = mode;
  }
  IntakeDecision before_receive() override {
    MutexLock lock(mutex_);
    ++consulted_;
    switch (mode_) {
      case Mode::Open:
        return {};
      case Mode::Paused:
        return {.max_messages = 0, .recheck = 5ms};
      case Mode::ProbeOnce:
        mode_ = Mode::Paused;
        return {.max_messages = 1, .recheck = 5ms, .probe = true};
    }
    return {};
  }
  void after_receive(const IntakeDecision& decision, std::size_t received) override {
    MutexLock lock(mutex_);
    if (decision.probe) probe_received_ += static_cast<int>(received);
  }
  int consulted() const {
    MutexLock lock(mutex_);
    return consulted_;
  }
  int probe_received() const {
    MutexLock lock(mutex_);
    return probe_received_;
  }

 private:
  mutable Mutex mutex_;
  Mode mode_ GUARDED_BY(mutex_) = Mode::Open;
  int consulted_ GUARDED_BY(mutex_) = 0;
  int probe_received_ GUARDED_BY(mutex_) = 0;
};

ListenerConfig gated(IntakeGate& gate) {
  return ListenerConfig{.max_in_flight = 4,
                        .receivers = 2,
                        .wait_time = 1s,
                        .flush_interval = 10ms,
                        .shutdown_grace = 5s,
                        .key_attribute = "chargeId",
                        .seed = 7,
                        .intake = &gate};
}

Handler acks(std::atomic<int>& handled) {
  return [&handled](const Message&, LeaseHeartbeat&) -> Task<Disposition> {
    ++handled;
    co_return Ack{};
  };
}

TEST(ListenerIntake, APausedGateMeansNoReceiveAtAll) {
  event::EventLoop loop;
  FakeQueue queue;
  for (int i = 0; i < 5; ++i) queue.send("m");
  ScriptedGate gate;
  gate.set(ScriptedGate::Mode::Paused);
  std::atomic<int> handled{0};
  ListenerContainer container(loop, queue, acks(handled), gated(gate));
  Running running(container);
  ASSERT_TRUE(eventually([&] { return gate.consulted() >= 20; }));  // it kept looking
  EXPECT_TRUE(queue.receive_requests().empty());
  EXPECT_EQ(handled.load(), 0);
  EXPECT_EQ(queue.visible(), 5u);
  running.stop();
}

TEST(ListenerIntake, AProbeReceivesExactlyOneMessage) {
  event::EventLoop loop;
  FakeQueue queue;
  for (int i = 0; i < 5; ++i) queue.send("m");
  ScriptedGate gate;
  gate.set(ScriptedGate::Mode::ProbeOnce);
  std::atomic<int> handled{0};
  ListenerContainer container(loop, queue, acks(handled), gated(gate));
  Running running(container);
  ASSERT_TRUE(eventually([&] { return handled.load() == 1; }));
  ASSERT_TRUE(eventually([&] { return gate.consulted() >= 20; }));
  EXPECT_EQ(queue.receive_requests(), std::vector<int>{1});
  EXPECT_EQ(gate.probe_received(), 1);
  EXPECT_EQ(handled.load(), 1);
  running.stop();
}

TEST(ListenerIntake, OpeningTheGateResumesFullReceives) {
  event::EventLoop loop;
  FakeQueue queue;
  for (int i = 0; i < 8; ++i) queue.send("m");
  ScriptedGate gate;
  gate.set(ScriptedGate::Mode::Paused);
  std::atomic<int> handled{0};
  ListenerContainer container(loop, queue, acks(handled), gated(gate));
  Running running(container);
  ASSERT_TRUE(eventually([&] { return gate.consulted() >= 5; }));
  gate.set(ScriptedGate::Mode::Open);
  ASSERT_TRUE(eventually([&] { return handled.load() == 8; }));
  ASSERT_FALSE(queue.receive_requests().empty());
  EXPECT_EQ(queue.receive_requests().front(), 4);  // every free worker at once
  running.stop();
  EXPECT_EQ(queue.remaining(), 0u);
}

TEST(ListenerIntake, StopWhilePausedReturnsPromptly) {
  event::EventLoop loop;
  FakeQueue queue;
  ScriptedGate gate;
  gate.set(ScriptedGate::Mode::Paused);
  std::atomic<int> handled{0};
  RecordingObserver observer;
  ListenerContainer container(loop, queue, acks(handled), gated(gate), &observer);
  Running running(container);
  ASSERT_TRUE(eventually([&] { return gate.consulted() >= 2; }));
  running.stop();  // must not hang on the paused receivers
  EXPECT_TRUE(queue.receive_requests().empty());
}

}  // namespace
}  // namespace ic::consumer
