// The ack batcher on its own: batch size and deadline, per-entry failures by position, the
// single retry of retryable entries, and the flush on stop.
#include "consumer/ack_batcher.hpp"

#include <gtest/gtest.h>

#include "testing/fake_queue.hpp"
#include "testing/fault_injecting_queue.hpp"
#include "testing/listener_support.hpp"

namespace ic::consumer {
namespace {

using namespace std::chrono_literals;
using testing::eventually;
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
    auto got = queue.receive(10, 0s);
    if (!got) throw std::runtime_error("fake receive failed");
    for (auto& m : *got) out.push_back({m.message_id, m.receipt_handle});
  }
  return out;
}

TEST(AckBatcher, TenEntriesLeaveAtOnceAsOneCall) {
  FakeQueue queue;
  RecordingObserver observer;
  AckBatcher batcher(queue, observer, 1h);
  batcher.start();
  for (const auto& m : deliver(queue, 10)) batcher.add_delete({m.id, m.handle});
  ASSERT_TRUE(eventually([&] { return queue.remaining() == 0; }));
  ASSERT_EQ(queue.delete_calls().size(), 1u);
  EXPECT_EQ(queue.delete_calls()[0].size(), 10u);
  batcher.stop();
  EXPECT_EQ(queue.delete_calls().size(), 1u);
}

TEST(AckBatcher, ElevenEntriesMakeTwoCallsOfAtMostTen) {
  FakeQueue queue;
  RecordingObserver observer;
  AckBatcher batcher(queue, observer, 1h);
  batcher.start();
  for (const auto& m : deliver(queue, 11)) batcher.add_delete({m.id, m.handle});
  batcher.stop();
  ASSERT_EQ(queue.delete_calls().size(), 2u);
  EXPECT_EQ(queue.delete_calls()[0].size(), 10u);
  EXPECT_EQ(queue.delete_calls()[1].size(), 1u);
  EXPECT_EQ(queue.remaining(), 0u);
}

TEST(AckBatcher, APartialBatchLeavesAtTheDeadline) {
  FakeQueue queue;
  RecordingObserver observer;
  AckBatcher batcher(queue, observer, 30ms);
  batcher.start();
  const auto started = std::chrono::steady_clock::now();
  for (const auto& m : deliver(queue, 3)) batcher.add_delete({m.id, m.handle});
  ASSERT_TRUE(eventually([&] { return queue.remaining() == 0; }));
  EXPECT_GE(std::chrono::steady_clock::now() - started, 30ms);
  std::size_t entries = 0;
  for (const auto& call : queue.delete_calls()) entries += call.size();
  EXPECT_EQ(entries, 3u);
  batcher.stop();
}

TEST(AckBatcher, StopFlushesEverythingBuffered) {
  FakeQueue queue;
  RecordingObserver observer;
  AckBatcher batcher(queue, observer, 1h);
  batcher.start();
  const auto delivered = deliver(queue, 4);
  batcher.add_delete({delivered[0].id, delivered[0].handle});
  batcher.add_delete({delivered[1].id, delivered[1].handle});
  batcher.add_visibility({delivered[2].id, delivered[2].handle, 0s});
  batcher.add_visibility({delivered[3].id, delivered[3].handle, 0s});
  batcher.stop();
  EXPECT_EQ(queue.remaining(), 2u);
  EXPECT_EQ(queue.visible(), 2u);
}

TEST(AckBatcher, RetriesOnlyTheFailedRetryableEntriesByPosition) {
  FakeQueue queue;
  FaultInjectingQueue faulty(queue);
  RecordingObserver observer;
  AckBatcher batcher(faulty, observer, 1h);
  batcher.start();
  // Two deliveries of one message: the entries share a message id and differ by position.
  queue.duplicate_next_delivery();
  queue.send("twice");
  auto got = queue.receive(10, 0s);
  ASSERT_TRUE(got && got->size() == 2);
  faulty.fail_delete_entries(1, {.error_class = ErrorClass::Retryable, .code = "InternalError"});
  batcher.add_delete({(*got)[0].message_id, (*got)[0].receipt_handle});
  batcher.add_delete({(*got)[1].message_id, (*got)[1].receipt_handle});
  batcher.stop();
  const auto calls = queue.delete_calls();
  ASSERT_EQ(calls.size(), 2u);
  ASSERT_EQ(calls[0].size(), 1u);
  EXPECT_EQ(calls[0][0].receipt_handle, (*got)[1].receipt_handle) << "position 1 went through";
  ASSERT_EQ(calls[1].size(), 1u);
  EXPECT_EQ(calls[1][0].receipt_handle, (*got)[0].receipt_handle) << "position 0 was retried";
  ASSERT_EQ(observer.entry_failures().size(), 1u);
  EXPECT_FALSE(observer.entry_failures()[0].final);
}

TEST(AckBatcher, WholeCallFailureRetriesTheBatchOnceThenReportsEachEntry) {
  FakeQueue queue;
  FaultInjectingQueue faulty(queue);
  RecordingObserver observer;
  AckBatcher batcher(faulty, observer, 1h);
  batcher.start();
  const auto delivered = deliver(queue, 3);
  faulty.fail_delete_calls(2, {.error_class = ErrorClass::Throttling, .code = "RequestThrottled"});
  for (const auto& m : delivered) batcher.add_delete({m.id, m.handle});
  batcher.stop();
  const auto failures = observer.entry_failures();
  ASSERT_EQ(failures.size(), 6u);
  for (std::size_t i = 0; i < 3; ++i) EXPECT_FALSE(failures[i].final);
  for (std::size_t i = 3; i < 6; ++i) {
    EXPECT_TRUE(failures[i].final);
    EXPECT_EQ(failures[i].action, BatchAction::Delete);
  }
  EXPECT_EQ(queue.remaining(), 3u) << "not deleted, and said so";
}

TEST(AckBatcher, PermanentVisibilityEntryFailureIsFinalAtOnce) {
  FakeQueue queue;
  RecordingObserver observer;
  AckBatcher batcher(queue, observer, 1h);
  batcher.start();
  batcher.add_visibility({"msg-x", "bogus-handle", 5s});
  batcher.stop();
  EXPECT_EQ(queue.visibility_calls().size(), 1u);
  const auto failures = observer.entry_failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_TRUE(failures[0].final);
  EXPECT_EQ(failures[0].action, BatchAction::ChangeVisibility);
  EXPECT_EQ(failures[0].error.code, "ReceiptHandleIsInvalid");
}

TEST(AckBatcher, AddAfterStopIsABrokenInvariant) {
  FakeQueue queue;
  RecordingObserver observer;
  AckBatcher batcher(queue, observer, 1h);
  batcher.start();
  batcher.stop();
  EXPECT_THROW(batcher.add_delete({"m", "h"}), std::logic_error);
}

}  // namespace
}  // namespace ic::consumer
