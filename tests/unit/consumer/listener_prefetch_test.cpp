// The listener container's prefetch buffer and its stop path: full batches while every worker
// is busy, prefetched messages too old to start handed back, a long poll let answer for its
// drain and then cut short by a stop, and everything received but unstarted handed back on
// shutdown.
#include <gtest/gtest.h>

#include <atomic>
#include <condition_variable>
#include <mutex>
#include <semaphore>

#include "consumer/listener_container.hpp"
#include "testing/fake_queue.hpp"
#include "testing/listener_support.hpp"

namespace ic::consumer {
namespace {

using namespace std::chrono_literals;
using testing::ack_when_released;
using testing::eventually;
using testing::FakeQueue;
using testing::RecordingObserver;
using testing::Running;

ListenerConfig prefetching(std::size_t workers, std::size_t prefetch) {
  return ListenerConfig{.workers = workers,
                        .prefetch = prefetch,
                        .wait_time = 20s,
                        .flush_interval = 20ms,
                        .shutdown_grace = 5s,
                        .receive_backoff = {.base = 5ms, .cap = 40ms},
                        .seed = 42};
}

TEST(ListenerPrefetch, BusyWorkersAreFedWholeBatches) {
  FakeQueue queue;
  RecordingObserver observer;
  for (int i = 0; i < 30; ++i) queue.send("m");
  std::counting_semaphore<100> release(0);
  std::atomic<int> started{0};
  ListenerContainer container(queue, ack_when_released(started, release), prefetching(3, 10),
                              &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return started.load() == 3; }));
  EXPECT_EQ(queue.receive_requests(), std::vector<int>{10});
  // Freeing fewer slots than a batch while every worker stays busy must not trigger a poll.
  release.release(5);
  ASSERT_TRUE(eventually([&] { return started.load() == 8; }));
  EXPECT_EQ(queue.receive_requests(), std::vector<int>{10});
  release.release(100);
  ASSERT_TRUE(eventually([&] { return queue.remaining() == 0; }));
  running.stop();

  EXPECT_LE(observer.max_in_flight(), 3u);
  const auto asked = queue.receive_requests();
  ASSERT_GE(asked.size(), 3u);
  for (int n : asked) EXPECT_EQ(n, 10) << "never a receive for a single freed worker";
}

TEST(ListenerPrefetch, APrefetchWithoutAnAgeToKeepMessagesIsRefused) {
  FakeQueue queue;
  auto config = prefetching(4, 10);
  config.prefetch_max_age = 0ms;  // every prefetched message would be handed back unstarted
  EXPECT_THROW(ListenerContainer(
                   queue, [](const Message&, LeaseHeartbeat&) { return Ack{}; }, config),
               std::invalid_argument);
}

TEST(ListenerPrefetch, APrefetchedMessageTooOldToStartIsHandedBack) {
  FakeQueue queue;
  RecordingObserver observer;
  const auto first = queue.send("first");
  const auto second = queue.send("second");
  auto config = prefetching(1, 10);
  config.prefetch_max_age = 50ms;
  std::counting_semaphore<10> release(0);
  std::atomic<int> started{0};
  ListenerContainer container(queue, ack_when_released(started, release), config, &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return started.load() == 1; }));
  // The second message waits in the buffer behind the busy worker until it is too old; only
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
// answers it (as SQS does when a message arrives) from the fake's messages.
class EndlessPollQueue final : public QueuePort {
 public:
  explicit EndlessPollQueue(FakeQueue& fake) : fake_(fake) {}
  std::expected<std::vector<Message>, Error> receive(int, std::chrono::seconds) override {
    ADD_FAILURE() << "the container must use the stoppable receive";
    return std::vector<Message>{};
  }
  std::expected<std::vector<Message>, Error> receive_stoppable(int max_messages,
                                                               std::chrono::seconds,
                                                               std::stop_token stop) override {
    std::unique_lock lock(mutex_);
    ++polls;
    if (answer_.wait(lock, stop, [this] { return answered_; })) {
      return fake_.receive(max_messages, std::chrono::seconds{0});
    }
    ++cut_short;
    return std::vector<Message>{};
  }
  void answer() {
    {
      std::lock_guard lock(mutex_);
      answered_ = true;
    }
    answer_.notify_all();
  }
  std::expected<BatchResult, Error> delete_batch(std::span<const DeleteEntry> entries) override {
    return fake_.delete_batch(entries);
  }
  std::expected<BatchResult, Error> change_visibility_batch(
      std::span<const VisibilityEntry> entries) override {
    return fake_.change_visibility_batch(entries);
  }
  std::expected<void, Error> send_to_dlq(std::string_view body,
                                         const MessageAttributes& attributes) override {
    return fake_.send_to_dlq(body, attributes);
  }

  std::atomic<int> polls{0};
  std::atomic<int> cut_short{0};

 private:
  FakeQueue& fake_;
  std::mutex mutex_;
  std::condition_variable_any answer_;
  bool answered_ = false;
};

TEST(ListenerPrefetch, StopCutsTheLongPollInProgressShortAfterItsDrain) {
  FakeQueue fake;
  EndlessPollQueue queue(fake);
  auto config = prefetching(4, 10);
  config.receivers = 2;
  config.poll_drain = 10ms;
  ListenerContainer container(
      queue, [](const Message&, LeaseHeartbeat&) { return Ack{}; }, config);
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
  FakeQueue fake;
  RecordingObserver observer;
  EndlessPollQueue queue(fake);
  auto config = prefetching(4, 0);
  config.poll_drain = 1h;  // the answer below comes well within it
  std::atomic<int> started{0};
  ListenerContainer container(
      queue,
      [&](const Message&, LeaseHeartbeat&) {
        ++started;
        return Ack{};
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
  FakeQueue queue;
  RecordingObserver observer;
  const auto first = queue.send("a");
  const auto second = queue.send("b");
  const auto third = queue.send("c");
  auto config = prefetching(1, 10);
  config.flush_interval = 1h;  // acks leave only with the shutdown flush
  std::counting_semaphore<10> release(0);
  std::atomic<int> started{0};
  ListenerContainer container(queue, ack_when_released(started, release), config, &observer);
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
