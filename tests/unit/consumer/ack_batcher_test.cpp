// The ack batcher on its own, on a loop whose clock the test moves: batch size and deadline,
// per-entry failures by position, the single retry of retryable entries, and the flush on stop.
#include "consumer/ack_batcher.hpp"

#include <gtest/gtest.h>

#include "event/run_blocking.hpp"
#include "testing/clocks.hpp"
#include "testing/fake_queue.hpp"
#include "testing/fault_injecting_queue.hpp"
#include "testing/listener_support.hpp"

namespace ic::consumer {
namespace {

using namespace std::chrono_literals;
using testing::FakeQueue;
using testing::FaultInjectingQueue;
using testing::RecordingObserver;

struct Delivered {
  std::string id;
  std::string handle;
};

std::vector<Delivered> deliver(FakeQueue& queue, int n) {
  for (int i = 0; i < n; ++i) queue.send("m" + std::to_string(i));
  std::vector<Delivered> out;
  while (std::ssize(out) < n) {
    auto got = event::run_blocking(queue.receive(10, 0s));
    if (!got) throw std::runtime_error("fake receive failed");
    for (auto& m : *got) out.push_back({m.message_id, m.receipt_handle});
  }
  return out;
}

class AckBatcherTest : public ::testing::Test {
 protected:
  // Runs the batcher's stop() to its end on the loop.
  void stop(AckBatcher& batcher) {
    bool stopped = false;
    auto stopping = [&]() -> Task<void> {
      co_await batcher.stop();
      stopped = true;
    };
    spawn(stopping());
    while (!stopped) loop.run_ready();
  }

  testing::ManualSteadyClock clock;
  event::EventLoop loop{clock};
  FakeQueue queue;
  RecordingObserver observer;
};

TEST_F(AckBatcherTest, TenEntriesLeaveAtOnceAsOneCall) {
  AckBatcher batcher(loop, queue, observer, 1h);
  for (const auto& m : deliver(queue, 10)) batcher.add_delete({m.id, m.handle});
  loop.run_ready();
  EXPECT_EQ(queue.remaining(), 0u) << "no waiting for the deadline";
  ASSERT_EQ(queue.delete_calls().size(), 1u);
  EXPECT_EQ(queue.delete_calls()[0].size(), 10u);
  stop(batcher);
  EXPECT_EQ(queue.delete_calls().size(), 1u);
}

TEST_F(AckBatcherTest, ElevenEntriesMakeTwoCallsOfAtMostTen) {
  AckBatcher batcher(loop, queue, observer, 1h);
  for (const auto& m : deliver(queue, 11)) batcher.add_delete({m.id, m.handle});
  stop(batcher);
  ASSERT_EQ(queue.delete_calls().size(), 2u);
  EXPECT_EQ(queue.delete_calls()[0].size(), 10u);
  EXPECT_EQ(queue.delete_calls()[1].size(), 1u);
  EXPECT_EQ(queue.remaining(), 0u);
}

TEST_F(AckBatcherTest, APartialBatchLeavesAtTheDeadline) {
  AckBatcher batcher(loop, queue, observer, 30ms);
  const auto delivered = deliver(queue, 3);
  batcher.add_delete({delivered[0].id, delivered[0].handle});
  clock.advance(10ms);
  batcher.add_delete({delivered[1].id, delivered[1].handle});
  batcher.add_delete({delivered[2].id, delivered[2].handle});
  clock.advance(19ms);
  loop.run_ready();
  EXPECT_TRUE(queue.delete_calls().empty()) << "the oldest entry has waited 29 ms";
  clock.advance(1ms);
  loop.run_ready();
  ASSERT_EQ(queue.delete_calls().size(), 1u) << "due with the oldest, all three go";
  EXPECT_EQ(queue.delete_calls()[0].size(), 3u);
  EXPECT_EQ(queue.remaining(), 0u);
  stop(batcher);
}

TEST_F(AckBatcherTest, EntriesAddedAfterABatchLeftWaitForTheirOwnDeadline) {
  AckBatcher batcher(loop, queue, observer, 30ms);
  const auto delivered = deliver(queue, 2);
  batcher.add_delete({delivered[0].id, delivered[0].handle});
  clock.advance(30ms);
  loop.run_ready();
  batcher.add_delete({delivered[1].id, delivered[1].handle});
  clock.advance(29ms);
  loop.run_ready();
  EXPECT_EQ(queue.delete_calls().size(), 1u);
  clock.advance(1ms);
  loop.run_ready();
  EXPECT_EQ(queue.delete_calls().size(), 2u);
  stop(batcher);
}

TEST_F(AckBatcherTest, StopFlushesEverythingBuffered) {
  AckBatcher batcher(loop, queue, observer, 1h);
  const auto delivered = deliver(queue, 4);
  batcher.add_delete({delivered[0].id, delivered[0].handle});
  batcher.add_delete({delivered[1].id, delivered[1].handle});
  batcher.add_visibility({delivered[2].id, delivered[2].handle, 0s});
  batcher.add_visibility({delivered[3].id, delivered[3].handle, 0s});
  stop(batcher);
  EXPECT_EQ(queue.remaining(), 2u);
  EXPECT_EQ(queue.visible(), 2u);
}

TEST_F(AckBatcherTest, RetriesOnlyTheFailedRetryableEntriesByPosition) {
  FaultInjectingQueue faulty(queue);
  AckBatcher batcher(loop, faulty, observer, 1h);
  // Two deliveries of one message: the entries share a message id and differ by position.
  queue.duplicate_next_delivery();
  queue.send("twice");
  auto got = event::run_blocking(queue.receive(10, 0s));
  ASSERT_TRUE(got && got->size() == 2);
  faulty.fail_delete_entries(1, {.error_class = ErrorClass::Retryable, .code = "InternalError"});
  batcher.add_delete({(*got)[0].message_id, (*got)[0].receipt_handle});
  batcher.add_delete({(*got)[1].message_id, (*got)[1].receipt_handle});
  stop(batcher);
  const auto calls = queue.delete_calls();
  ASSERT_EQ(calls.size(), 2u);
  ASSERT_EQ(calls[0].size(), 1u);
  EXPECT_EQ(calls[0][0].receipt_handle, (*got)[1].receipt_handle) << "position 1 went through";
  ASSERT_EQ(calls[1].size(), 1u);
  EXPECT_EQ(calls[1][0].receipt_handle, (*got)[0].receipt_handle) << "position 0 was retried";
  ASSERT_EQ(observer.entry_failures().size(), 1u);
  EXPECT_FALSE(observer.entry_failures()[0].final);
}

TEST_F(AckBatcherTest, WholeCallFailureRetriesTheBatchOnceThenReportsEachEntry) {
  FaultInjectingQueue faulty(queue);
  AckBatcher batcher(loop, faulty, observer, 1h);
  const auto delivered = deliver(queue, 3);
  faulty.fail_delete_calls(2, {.error_class = ErrorClass::Throttling, .code = "RequestThrottled"});
  for (const auto& m : delivered) batcher.add_delete({m.id, m.handle});
  stop(batcher);
  const auto failures = observer.entry_failures();
  ASSERT_EQ(failures.size(), 6u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_FALSE(failures[i].final);
  for (std::size_t i = 3; i < 6; ++i) {
    EXPECT_TRUE(failures[i].final);
    EXPECT_EQ(failures[i].action, BatchAction::Delete);
  }
  EXPECT_EQ(queue.remaining(), 3u) << "not deleted, and said so";
}

TEST_F(AckBatcherTest, PermanentVisibilityEntryFailureIsFinalAtOnce) {
  AckBatcher batcher(loop, queue, observer, 1h);
  batcher.add_visibility({"msg-x", "bogus-handle", 5s});
  stop(batcher);
  EXPECT_EQ(queue.visibility_calls().size(), 1u);
  const auto failures = observer.entry_failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_TRUE(failures[0].final);
  EXPECT_EQ(failures[0].action, BatchAction::ChangeVisibility);
  EXPECT_EQ(failures[0].error.code, "ReceiptHandleIsInvalid");
}

TEST_F(AckBatcherTest, AnEntryAddedDuringTheStopIsSentAtOnce) {
  AckBatcher batcher(loop, queue, observer, 1h);
  stop(batcher);
  const auto delivered = deliver(queue, 1);
  batcher.add_delete({delivered[0].id, delivered[0].handle});
  stop(batcher);
  EXPECT_EQ(queue.remaining(), 0u) << "never left in a buffer nobody flushes";
}

}  // namespace
}  // namespace ic::consumer
