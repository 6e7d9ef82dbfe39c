// The listener container's prefetch buffer and its stop path: full batches while every slot
// is busy, prefetched messages too old to start handed back, a long poll let answer for its
// drain and then cut short by a stop, and everything received but unstarted handed back on
// shutdown.
#include <gtest/gtest.h>

#include <atomic>

#include "consumer/forwarding_queue.hpp"
#include "consumer/listener_container.hpp"
#include "testing/fake_queue.hpp"
#include "testing/listener_support.hpp"

namespace ic::consumer {
namespace {

using namespace std::chrono_literals;
using testing::ack_when_released;
using testing::eventually;
using testing::FakeQueue;
using testing::LoopGate;
using testing::RecordingObserver;
using testing::Running;

ListenerConfig prefetching(std::size_t max_in_flight, std::size_t prefetch) {
  return ListenerConfig{.max_in_flight = max_in_flight,
                        .prefetch = prefetch,
                        .wait_time = 20s,
                        .flush_interval = 20ms,
                        .shutdown_grace = 5s,
                        .receive_backoff = {.base = 5ms, .cap = 40ms},
                        .seed = 42};
}

TEST(ListenerPrefetch, BusySlotsAreFedWholeBatches) {
  event::EventLoop loop;
  FakeQueue queue;
  RecordingObserver observer;
  for (int i = 0; i < 30; ++i) queue.send("m");
  LoopGate release(loop);
  std::atomic<int> started{0};
  ListenerContainer container(loop, queue, ack_when_released(started, release), prefetching(3, 10),
                              &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return started.load() == 3; }));
  EXPECT_EQ(queue.receive_requests(), std::vector<int>{10});
  // Freeing fewer slots than a batch while every slot stays busy must not trigger a poll.
  release.release(5);
  ASSERT_TRUE(eventually([&] { return started.load() == 8; }));
  EXPECT_EQ(queue.receive_requests(), std::vector<int>{10});
  release.release(100);
  ASSERT_TRUE(eventually([&] { return queue.remaining() == 0; }));
  running.stop();

  EXPECT_LE(observer.max_in_flight(), 3u);
  const auto asked = queue.receive_requests();
  ASSERT_GE(asked.size(), 3u);
  for (int n : asked) EXPECT_EQ(n, 10) << "never a receive for a single freed slot";
}

TEST(ListenerPrefetch, APrefetchWithoutAnAgeToKeepMessagesIsRefused) {
  event::EventLoop loop;
  FakeQueue queue;
  auto config = prefetching(4, 10);
  config.prefetch_max_age = 0ms;  // every prefetched message would be handed back unstarted
  EXPECT_THROW(ListenerContainer(loop, queue, testing::always(Ack{}), config),
               std::invalid_argument);
}

TEST(ListenerPrefetch, APrefetchedMessageTooOldToStartIsHandedBack) {
  event::EventLoop loop;
  FakeQueue queue;
  RecordingObserver observer;
  const auto first = queue.send("first");
  const auto second = queue.send("second");
  auto config = prefetching(1, 10);
  config.prefetch_max_age = 50ms;
  LoopGate release(loop);
  std::atomic<int> started{0};
  ListenerContainer container(loop, queue, ack_when_released(started, release), config, &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return started.load() == 1; }));
  // The second message waits in the buffer behind the busy slot until it is too old; only
  // time passing can make it so.
  std::this_thread::sleep_for(100ms);
  release.release(10);
  ASSERT_TRUE(eventually([&] { return queue.deleted(first) && queue.deleted(second); }));
  running.stop();

  const auto visibility = queue.visibility_entries();
  ASSERT_FALSE(visibility.empty());
  EXPECT_EQ(visibility[0].message_id, second);
  EXPECT_EQ(visibility[0].timeout, 0s) << "handed back at once, not left to expire";
  EXPECT_GE(observer.returned_unstarted(), 1u);
}

// A queue whose long poll ends when the container's stop cuts it short, or when the test
// answers it (as SQS does when a message arrives) from the fake's messages. The poll waits on
// the container's loop; answer() comes from the test's thread.
class EndlessPollQueue final : public ForwardingQueue {
 public:
  EndlessPollQueue(FakeQueue& fake, event::EventLoop& loop)
      : ForwardingQueue(fake), loop_(loop), answer_(loop) {}
  Task<Received> receive(int max_messages, std::chrono::seconds, std::stop_token stop) override {
    ++polls;
    while (!answered_) {
      const event::Wake wake = co_await answer_.wait(std::nullopt, stop);
      if (wake == event::Wake::Stopped) {
        ++cut_short;
        co_return std::vector<Message>{};
      }
    }
    co_return co_await ForwardingQueue::receive(max_messages, std::chrono::seconds{0}, {});
  }
  void answer() {
    loop_.post([this] {
      answered_ = true;
      answer_.notify_all();
    });
  }

  std::atomic<int> polls{0};
  std::atomic<int> cut_short{0};

 private:
  event::EventLoop& loop_;
  event::WaitQueue answer_;
  bool answered_ = false;
};

TEST(ListenerPrefetch, StopCutsTheLongPollInProgressShortAfterItsDrain) {
  event::EventLoop loop;
  FakeQueue fake;
  EndlessPollQueue queue(fake, loop);
  auto config = prefetching(4, 10);
  config.receivers = 2;
  config.poll_drain = 10ms;
  ListenerContainer container(loop, queue, testing::always(Ack{}), config);
  std::atomic<bool> returned{false};
  std::thread runner([&] {
    container.run();
    returned = true;
  });
  ASSERT_TRUE(eventually([&] { return queue.polls.load() == 2; }));
  container.request_stop();
  // Without the cut the polls would never end; the deadline only bounds a hung test.
  EXPECT_TRUE(eventually([&] { return returned.load(); }));
  runner.join();
  EXPECT_EQ(queue.cut_short.load(), 2);
}

// SQS chose a message for the poll just as the stop came (issue 23): cutting the poll at once
// would leave it invisible, received by nobody, for the visibility timeout.
TEST(ListenerPrefetch, APollAnsweredDuringTheStopIsHandedBackNotStranded) {
  event::EventLoop loop;
  FakeQueue fake;
  RecordingObserver observer;
  EndlessPollQueue queue(fake, loop);
  auto config = prefetching(4, 0);
  config.poll_drain = 1h;  // the answer below comes well within it
  std::atomic<int> started{0};
  ListenerContainer container(
      loop, queue,
      [&](const Message&, LeaseHeartbeat&) -> Task<Disposition> {
        ++started;
        co_return Ack{};
      },
      config, &observer);
  std::thread runner([&] { container.run(); });
  ASSERT_TRUE(eventually([&] { return queue.polls.load() == 1; }));
  const auto chosen = fake.send("arrived as the stop came");
  container.request_stop();
  queue.answer();
  runner.join();

  EXPECT_EQ(queue.cut_short.load(), 0) << "the poll was let finish";
  EXPECT_EQ(started.load(), 0) << "nothing starts after the stop";
  const auto visibility = fake.visibility_entries();
  ASSERT_EQ(visibility.size(), 1u);
  EXPECT_EQ(visibility[0].message_id, chosen);
  EXPECT_EQ(visibility[0].timeout, 0s);
  EXPECT_EQ(fake.visible(), 1u) << "available to the next consumer at once";
}

TEST(ListenerPrefetch, ShutdownFinishesInFlightAndHandsBackEveryPrefetchedMessage) {
  event::EventLoop loop;
  FakeQueue queue;
  RecordingObserver observer;
  const auto first = queue.send("a");
  const auto second = queue.send("b");
  const auto third = queue.send("c");
  auto config = prefetching(1, 10);
  config.flush_interval = 1h;  // acks leave only with the shutdown flush
  LoopGate release(loop);
  std::atomic<int> started{0};
  ListenerContainer container(loop, queue, ack_when_released(started, release), config, &observer);
  std::thread runner([&] { container.run(); });

  ASSERT_TRUE(eventually([&] { return started.load() == 1; }));
  ASSERT_TRUE(eventually([&] { return observer.received() == 3; }));
  container.request_stop();
  release.release(10);
  runner.join();

  EXPECT_EQ(started.load(), 1) << "nothing starts after the stop";
  EXPECT_TRUE(queue.deleted(first));
  const auto visibility = queue.visibility_entries();
  ASSERT_EQ(visibility.size(), 2u);
  EXPECT_EQ(visibility[0].message_id, second);
  EXPECT_EQ(visibility[1].message_id, third);
  EXPECT_EQ(visibility[0].timeout, 0s);
  EXPECT_EQ(visibility[1].timeout, 0s);
  EXPECT_EQ(observer.returned_unstarted(), 2u);
  EXPECT_EQ(queue.visible(), 2u) << "the prefetched messages are available again at once";
}

}  // namespace
}  // namespace ic::consumer
