// Component tests of the listener container over the in-memory fake queue: each disposition's
// queue actions, flow control, batching, heartbeats, receive backoff and graceful shutdown.
#include "consumer/listener_container.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <set>

#include "consumer/dead_letter.hpp"
#include "consumer/forwarding_queue.hpp"
#include "core/sha256.hpp"
#include "testing/fake_queue.hpp"
#include "testing/fault_injecting_queue.hpp"
#include "testing/in_memory_quarantine.hpp"
#include "testing/listener_support.hpp"

namespace ic::consumer {
namespace {

using namespace std::chrono_literals;
using testing::ack_when_released;
using testing::always;
using testing::eventually;
using testing::eventually_on;
using testing::FakeQueue;
using testing::FaultInjectingQueue;
using testing::LoopGate;
using testing::RecordingObserver;
using testing::Running;

ListenerConfig fast_config() {
  return ListenerConfig{.max_in_flight = 4,
                        .wait_time = 20s,
                        .flush_interval = 20ms,
                        .shutdown_grace = 5s,
                        .receive_backoff = {.base = 5ms, .cap = 40ms},
                        .key_attribute = "chargeId",
                        .seed = 42};
}

std::size_t deleted_entries(const FakeQueue& queue) {
  std::size_t n = 0;
  for (const auto& call : queue.delete_calls()) n += call.size();
  return n;
}

// Runs an ack-everything container over `port` (`fake` itself or a fault-injecting wrapper of
// it) until `fake` has deleted message `id`, then stops it; false when that never happened.
[[nodiscard]] bool acked_until_deleted(QueuePort& port, const FakeQueue& fake,
                                       const std::string& id, RecordingObserver& observer) {
  event::EventLoop loop;
  ListenerContainer container(loop, port, always(Ack{}), fast_config(), &observer);
  Running running(container);
  const bool deleted = eventually([&] { return fake.deleted(id); });
  running.stop();
  return deleted;
}

TEST(ListenerContainer, AckDeletesTheMessage) {
  event::EventLoop loop;
  FakeQueue queue;
  RecordingObserver observer;
  const auto id = queue.send(R"({"n":1})");
  ASSERT_TRUE(acked_until_deleted(queue, queue, id, observer));
  EXPECT_EQ(queue.remaining(), 0u);
  EXPECT_TRUE(queue.visibility_calls().empty());
  ASSERT_EQ(observer.dispositions().size(), 1u);
  EXPECT_EQ(observer.dispositions()[0].first, DispositionKind::Ack);
  EXPECT_EQ(observer.received(), 1u);
}

TEST(ListenerContainer, RetryLaterSetsVisibilityWithinJitterBoundsAndNeverDeletes) {
  event::EventLoop loop;
  FakeQueue queue;
  RecordingObserver observer;
  for (int i = 0; i < 20; ++i) queue.send("m" + std::to_string(i));
  auto config = fast_config();
  config.retry_jitter_ratio = 0.5;
  ListenerContainer container(
      loop, queue, always(RetryLater{.after = 10s, .reason = "in_progress"}), config, &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return queue.visibility_entries().size() >= 20; }));
  running.stop();
  std::set<std::int64_t> seen;
  std::size_t handed_back = 0;
  for (const auto& entry : queue.visibility_entries()) {
    if (entry.timeout == 0s) {  // received but not started when the stop came
      ++handed_back;
      continue;
    }
    EXPECT_GE(entry.timeout, 10s);
    EXPECT_LE(entry.timeout, 15s);
    seen.insert(entry.timeout.count());
  }
  EXPECT_EQ(handed_back, observer.returned_unstarted());
  EXPECT_GT(seen.size(), 1u) << "jitter spreads the retries";
  EXPECT_EQ(deleted_entries(queue), 0u);
  EXPECT_EQ(queue.remaining(), 20u);
}

TEST(ListenerContainer, DeadLetterForwardsOriginalBodyWithAttributesThenDeletes) {
  event::EventLoop loop;
  FakeQueue queue;
  const std::string body = R"({"chargeId":"CHG-1", "odd spacing" : true})";
  const auto id = queue.send(body, {{"traceparent", {"String", "00-abc-01"}}});
  auto config = fast_config();
  config.key_attribute = "orderId";
  ListenerContainer container(
      loop, queue,
      always(DeadLetter{.reason = "PAYLOAD_MISMATCH", .detail = "hash differs", .key = "CHG-1"}),
      config);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return queue.deleted(id); }));
  running.stop();
  const auto dlq = queue.dead_lettered();
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(dlq[0].body, body);
  const MessageAttributes expected{{"failureReason", {"String", "PAYLOAD_MISMATCH"}},
                                   {"failureDetail", {"String", "hash differs"}},
                                   {"orderId", {"String", "CHG-1"}},
                                   {"sourceMessageId", {"String", id}},
                                   {"traceparent", {"String", "00-abc-01"}}};
  EXPECT_EQ(dlq[0].attributes, expected);
}

TEST(ListenerContainer, DlqSendFailureKeepsTheMessageAndRetriesLater) {
  event::EventLoop loop;
  FakeQueue queue;
  FaultInjectingQueue faulty(queue);
  RecordingObserver observer;
  faulty.fail_dlq_sends(1, {.error_class = ErrorClass::Retryable, .code = "InternalError"});
  const auto id = queue.send("poison");
  auto config = fast_config();
  config.dlq_failure_retry = 3s;
  std::atomic<int> calls{0};
  ListenerContainer container(
      loop, faulty,
      [&](const Message&, LeaseHeartbeat&) -> Task<Disposition> {
        ++calls;
        co_return DeadLetter{.reason = "INVALID_MESSAGE", .detail = "not JSON", .key = ""};
      },
      config, &observer);
  Running running(container);

  // First attempt: no delete, visibility set to the configured retry; the second delivery
  // (after the fake's scaled 3 s) is forwarded and deleted.
  ASSERT_TRUE(eventually([&] { return queue.deleted(id); }));
  running.stop();
  EXPECT_EQ(calls.load(), 2);
  EXPECT_EQ(observer.dlq_failures(), std::vector<std::string>{id});
  const auto visibility = queue.visibility_entries();
  ASSERT_EQ(visibility.size(), 1u);
  EXPECT_GE(visibility[0].timeout, 3s);
  EXPECT_LE(visibility[0].timeout, 4s);
  const auto dlq = queue.dead_lettered();
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_FALSE(dlq[0].attributes.contains("chargeId")) << "no key, no key attribute";
  EXPECT_EQ(dlq[0].attributes.at("failureReason").value, "INVALID_MESSAGE");
}

// SQS refuses a copy for good when attributes push it over the size limit: the container sends
// a smaller copy at once instead of retrying the same one until maxReceiveCount.
TEST(ListenerContainer, RefusedDlqCopyIsFollowedAtOnceByACopyWithoutProducerAttributes) {
  event::EventLoop loop;
  FakeQueue queue;
  FaultInjectingQueue faulty(queue);
  RecordingObserver observer;
  faulty.fail_dlq_sends(1, {.error_class = ErrorClass::Permanent,
                            .code = "InvalidParameterValue",
                            .message = "Message must be shorter than 262144 bytes."});
  const auto id = queue.send("poison", {{"big", {"String", std::string(200'000, 'x')}}});
  ListenerContainer container(
      loop, faulty,
      always(DeadLetter{.reason = "INVALID_MESSAGE", .detail = "body: bad", .key = ""}),
      fast_config(), &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return queue.deleted(id); }));
  running.stop();
  const auto dlq = queue.dead_lettered();
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(dlq[0].body, "poison");
  const MessageAttributes expected{{"failureReason", {"String", "INVALID_MESSAGE"}},
                                   {"failureDetail", {"String", "body: bad"}},
                                   {"sourceMessageId", {"String", id}}};
  EXPECT_EQ(dlq[0].attributes, expected);
  EXPECT_EQ(observer.dlq_copies_refused(), std::vector<std::string>{"ours_only"});
  EXPECT_EQ(observer.dlq_attributes_dropped(), std::vector<std::string>{"big"});
  EXPECT_TRUE(observer.dlq_failures().empty());
  EXPECT_TRUE(queue.visibility_entries().empty()) << "no delivery waited for a retry";
}

TEST(ListenerContainer, DlqCopyRefusedAtEverySizeIsKeptForRetryNotLost) {
  event::EventLoop loop;
  FakeQueue queue;
  FaultInjectingQueue faulty(queue);
  RecordingObserver observer;
  faulty.fail_dlq_sends(3, {.error_class = ErrorClass::Permanent, .code = "InvalidParameterValue"});
  const auto id = queue.send("poison", {{"traceparent", {"String", "00-1"}}});
  auto config = fast_config();
  config.dlq_failure_retry = 3s;
  ListenerContainer container(
      loop, faulty,
      always(DeadLetter{.reason = "INVALID_MESSAGE", .detail = "body: bad", .key = ""}), config,
      &observer);
  Running running(container);

  // Full, ours only, reason only: all refused, so the message waits; the next delivery's
  // full copy goes through.
  ASSERT_TRUE(eventually([&] { return queue.deleted(id); }));
  running.stop();
  EXPECT_EQ(observer.dlq_copies_refused(), (std::vector<std::string>{"ours_only", "reason_only"}));
  EXPECT_EQ(observer.dlq_failures(), std::vector<std::string>{id});
  const auto dlq = queue.dead_lettered();
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(dlq[0].attributes.at("traceparent").value, "00-1");
  EXPECT_TRUE(observer.dlq_attributes_dropped().empty());
}

// A body that alone fills the DLQ's limit leaves no room for failureReason: the reason is
// quarantined first, then the body goes alone, so the message is never left to SQS's redrive
// without a reason.
TEST(ListenerContainer, ACopyNoAttributeFitsIsQuarantinedThenSentBodyOnly) {
  event::EventLoop loop;
  FakeQueue queue;
  FaultInjectingQueue faulty(queue);
  RecordingObserver observer;
  testing::InMemoryQuarantine quarantine;
  faulty.fail_dlq_sends(3, {.error_class = ErrorClass::Permanent, .code = "MessageTooLarge"});
  const auto id = queue.send("poison", {{"traceparent", {"String", "00-1"}}});
  auto config = fast_config();
  config.quarantine = &quarantine;
  ListenerContainer container(
      loop, faulty,
      always(DeadLetter{.reason = "INVALID_MESSAGE", .detail = "body: bad", .key = ""}), config,
      &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return queue.deleted(id); }));
  running.stop();
  EXPECT_EQ(observer.dlq_copies_refused(),
            (std::vector<std::string>{"ours_only", "reason_only", "body_only"}));
  const auto dlq = queue.dead_lettered();
  ASSERT_EQ(dlq.size(), 1u);
  EXPECT_EQ(dlq[0].body, "poison");
  EXPECT_TRUE(dlq[0].attributes.empty());
  const std::vector<QuarantineRecord> expected{{.body_sha256 = sha256_hex("poison"),
                                                .failure_reason = "INVALID_MESSAGE",
                                                .failure_detail = "body: bad",
                                                .source_message_id = id}};
  EXPECT_EQ(quarantine.puts(), expected);
  EXPECT_EQ(observer.quarantined(),
            (std::vector<std::pair<std::string, std::string>>{{id, "INVALID_MESSAGE"}}));
  EXPECT_TRUE(observer.dlq_failures().empty());
}

// No body-only copy without its durable reason: a failed quarantine write is a failed forward.
TEST(ListenerContainer, AFailedQuarantineWriteSendsNoBodyOnlyCopyAndRetriesTheMessage) {
  event::EventLoop loop;
  FakeQueue queue;
  FaultInjectingQueue faulty(queue);
  RecordingObserver observer;
  testing::InMemoryQuarantine quarantine;
  quarantine.fail_puts(1);
  // Three copies refused at each delivery; the second delivery's body-only copy goes through.
  faulty.fail_dlq_sends(6, {.error_class = ErrorClass::Permanent, .code = "MessageTooLarge"});
  const auto id = queue.send("poison", {{"traceparent", {"String", "00-1"}}});
  auto config = fast_config();
  config.quarantine = &quarantine;
  config.dlq_failure_retry = 1s;
  ListenerContainer container(
      loop, faulty,
      always(DeadLetter{.reason = "INVALID_MESSAGE", .detail = "body: bad", .key = ""}), config,
      &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return queue.deleted(id); }));
  running.stop();
  EXPECT_EQ(observer.dlq_failures(), std::vector<std::string>{id});
  EXPECT_EQ(quarantine.puts().size(), 1u) << "written on the second delivery";
  ASSERT_EQ(queue.dead_lettered().size(), 1u);
  EXPECT_TRUE(queue.dead_lettered()[0].attributes.empty());
}

// Without a quarantine port nothing would keep the reason: no body-only copy is ever sent.
TEST(ListenerContainer, WithoutAQuarantineNoBodyOnlyCopyIsSent) {
  event::EventLoop loop;
  FakeQueue queue;
  FaultInjectingQueue faulty(queue);
  RecordingObserver observer;
  faulty.fail_dlq_sends(3, {.error_class = ErrorClass::Permanent, .code = "MessageTooLarge"});
  queue.send("poison", {{"traceparent", {"String", "00-1"}}});
  auto config = fast_config();
  config.dlq_failure_retry = 600s;  // no second delivery during the test
  ListenerContainer container(
      loop, faulty,
      always(DeadLetter{.reason = "INVALID_MESSAGE", .detail = "body: bad", .key = ""}), config,
      &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return !observer.dlq_failures().empty(); }));
  running.stop();
  EXPECT_EQ(observer.dlq_copies_refused(), (std::vector<std::string>{"ours_only", "reason_only"}));
  EXPECT_TRUE(queue.dead_lettered().empty());
}

TEST(ListenerContainer, ReportsProducerAttributesBeyondTheSqsLimit) {
  event::EventLoop loop;
  FakeQueue queue;
  RecordingObserver observer;
  MessageAttributes producer;
  for (int i = 0; i < 8; ++i)
    producer.emplace("p" + std::to_string(i), MessageAttribute{"String", "v"});
  const auto id = queue.send("poison", producer);
  ListenerContainer container(
      loop, queue,
      always(DeadLetter{.reason = "PAYLOAD_MISMATCH", .detail = "differs", .key = "CHG-1"}),
      fast_config(), &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return queue.deleted(id); }));
  running.stop();
  // Four of ours leave room for six of the eight, in name order.
  EXPECT_EQ(queue.dead_lettered().at(0).attributes.size(), kMaxMessageAttributes);
  EXPECT_EQ(observer.dlq_attributes_dropped(), (std::vector<std::string>{"p6", "p7"}));
  EXPECT_TRUE(observer.dlq_copies_refused().empty());
}

TEST(ListenerContainer, AsksOnlyForAsManyMessagesAsThereAreFreeSlots) {
  event::EventLoop loop;
  FakeQueue queue;
  RecordingObserver observer;
  for (int i = 0; i < 10; ++i) queue.send("m");
  auto config = fast_config();
  config.max_in_flight = 3;
  LoopGate release(loop);
  std::atomic<int> started{0};
  ListenerContainer container(loop, queue, ack_when_released(started, release), config, &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return started.load() == 3; }));
  // With every slot busy the receiver must not poll at all; give a wrong one time to.
  std::this_thread::sleep_for(100ms);
  EXPECT_EQ(queue.receive_requests(), std::vector<int>{3});
  release.release(1);
  ASSERT_TRUE(eventually([&] { return queue.receive_requests().size() == 2; }));
  EXPECT_EQ(queue.receive_requests()[1], 1);
  release.release(100);
  ASSERT_TRUE(eventually([&] { return queue.remaining() == 0; }));
  running.stop();
  EXPECT_LE(observer.max_in_flight(), 3u);
  for (int asked : queue.receive_requests()) {
    EXPECT_GE(asked, 1);
    EXPECT_LE(asked, 3);
  }
}

TEST(ListenerContainer, NeverAsksForMoreThanTenPerReceive) {
  event::EventLoop loop;
  FakeQueue queue;
  queue.send("m");
  auto config = fast_config();
  config.max_in_flight = 25;
  ListenerContainer container(loop, queue, always(Ack{}), config);
  Running running(container);
  ASSERT_TRUE(eventually([&] { return queue.remaining() == 0; }));
  running.stop();
  ASSERT_FALSE(queue.receive_requests().empty());
  EXPECT_EQ(queue.receive_requests().front(), 10);
}

TEST(ListenerContainer, TenAcksLeaveAsOneBatch) {
  event::EventLoop loop;
  FakeQueue queue;
  for (int i = 0; i < 10; ++i) queue.send("m");
  auto config = fast_config();
  config.max_in_flight = 10;
  config.flush_interval = 1h;  // only a full batch can leave before shutdown
  ListenerContainer container(loop, queue, always(Ack{}), config);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return queue.remaining() == 0; }));
  running.stop();
  ASSERT_EQ(queue.delete_calls().size(), 1u);
  EXPECT_EQ(queue.delete_calls()[0].size(), 10u);
}

TEST(ListenerContainer, RetryableEntryFailureIsRetriedOnceAndSucceeds) {
  event::EventLoop loop;
  FakeQueue queue;
  FaultInjectingQueue faulty(queue);
  RecordingObserver observer;
  faulty.fail_delete_entries(1, {.error_class = ErrorClass::Retryable, .code = "InternalError"});
  const auto id = queue.send("m");
  ASSERT_TRUE(acked_until_deleted(faulty, queue, id, observer));
  EXPECT_EQ(queue.delete_calls().size(), 1u) << "the failed entry never reached the queue";
  const auto failures = observer.entry_failures();
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0].message_id, id);
  EXPECT_EQ(failures[0].error.code, "InternalError");
  EXPECT_FALSE(failures[0].final);
}

TEST(ListenerContainer, DeleteThatFailsTwiceIsReportedAndTheRedeliveryIsAcked) {
  event::EventLoop loop;
  FakeQueue queue;
  FaultInjectingQueue faulty(queue);
  RecordingObserver observer;
  faulty.fail_delete_entries(2, {.error_class = ErrorClass::Retryable, .code = "InternalError"});
  const auto id = queue.send("m");
  std::atomic<int> calls{0};
  ListenerContainer container(
      loop, faulty,
      [&](const Message&, LeaseHeartbeat&) -> Task<Disposition> {
        ++calls;
        co_return Ack{};
      },
      fast_config(), &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return queue.deleted(id); }));
  running.stop();
  EXPECT_EQ(calls.load(), 2) << "the lost delete came back as a redelivery";
  const auto failures = observer.entry_failures();
  ASSERT_EQ(failures.size(), 2u);
  EXPECT_FALSE(failures[0].final);
  EXPECT_TRUE(failures[1].final);
}

TEST(ListenerContainer, PermanentEntryFailureIsReportedWithoutRetry) {
  event::EventLoop loop;
  FakeQueue queue;
  FaultInjectingQueue faulty(queue);
  RecordingObserver observer;
  faulty.fail_delete_entries(
      1, {.error_class = ErrorClass::Permanent, .code = "ReceiptHandleIsInvalid"});
  queue.send("m");
  auto config = fast_config();
  ListenerContainer container(loop, faulty, always(Ack{}), config, &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] { return !observer.entry_failures().empty(); }));
  running.stop();
  EXPECT_TRUE(queue.delete_calls().empty()) << "a permanent failure is not retried";
  EXPECT_TRUE(observer.entry_failures()[0].final);
}

TEST(ListenerContainer, SameMessageTwiceInOneReceiveIsHandledByPosition) {
  event::EventLoop loop;
  FakeQueue queue;
  RecordingObserver observer;
  queue.duplicate_next_delivery();
  const auto id = queue.send("m");
  auto config = fast_config();
  config.flush_interval = 1h;  // both deletes end up in the shutdown flush, one batch
  std::mutex mutex;
  std::vector<std::string> handles;
  ListenerContainer container(
      loop, queue,
      [&](const Message& message, LeaseHeartbeat&) -> Task<Disposition> {
        std::lock_guard lock(mutex);
        handles.push_back(message.receipt_handle);
        co_return Ack{};
      },
      config, &observer);
  Running running(container);

  ASSERT_TRUE(eventually([&] {
    std::lock_guard lock(mutex);
    return handles.size() == 2;
  }));
  running.stop();
  EXPECT_NE(handles[0], handles[1]);
  const auto calls = queue.delete_calls();
  ASSERT_EQ(calls.size(), 1u);
  const auto& batch = calls[0];
  ASSERT_EQ(batch.size(), 2u);
  EXPECT_EQ(batch[0].message_id, id);
  EXPECT_EQ(batch[1].message_id, id);
  EXPECT_TRUE(observer.entry_failures().empty());
  EXPECT_TRUE(queue.deleted(id));
}

// One delivery whose handler heartbeats with `lease` while extend_claim answers `answers` in
// turn, then waits `linger` (a wrong extra tick would show) and acks. Returns when each
// extension came, measured from the heartbeat's start.
std::vector<std::chrono::steady_clock::duration> heartbeat_one_delivery(
    FakeQueue& queue, RecordingObserver& observer, Millis lease,
    const std::vector<ClaimExtension>& answers, std::chrono::milliseconds linger) {
  auto config = fast_config();
  config.wait_time = 1s;
  std::atomic<std::size_t> extends{0};
  std::vector<std::chrono::steady_clock::duration> at;
  event::EventLoop loop;
  ListenerContainer container(
      loop, queue,
      [&](const Message&, LeaseHeartbeat& heartbeat) -> Task<Disposition> {
        const auto start = std::chrono::steady_clock::now();
        heartbeat.start(
            [&]() -> Task<ClaimExtension> {
              at.push_back(std::chrono::steady_clock::now() - start);
              const std::size_t n = extends++;
              co_return n < answers.size() ? answers[n] : ClaimExtension::Lost;
            },
            lease);
        const bool all_answered =
            co_await eventually_on(loop, [&] { return extends.load() >= answers.size(); });
        EXPECT_TRUE(all_answered);
        co_await event::sleep_for(loop, linger);
        co_await heartbeat.stop();
        co_return Ack{};
      },
      config, &observer);
  Running running(container);
  EXPECT_TRUE(eventually([&] { return observer.dispositions().size() == 1; }));
  running.stop();
  return at;
}

TEST(ListenerContainer, HeartbeatExtendsClaimAndVisibilityAtHalfLeaseUntilClaimIsLost) {
  event::EventLoop loop;
  // Real seconds here: the extended visibility must really keep the message hidden.
  FakeQueue queue(FakeQueue::Options{.second = 1s});
  RecordingObserver observer;
  const auto id = queue.send("long");
  constexpr auto lease = 1500ms;
  // The third extension finds the claim gone. After Lost the heartbeat must stay quiet; a
  // wrong tick would fire within 750 ms.
  const std::vector answers{ClaimExtension::Extended, ClaimExtension::Extended,
                            ClaimExtension::Lost};
  const auto at = heartbeat_one_delivery(queue, observer, lease, answers, 900ms);

  ASSERT_EQ(at.size(), 3u);
  EXPECT_GE(at[0], lease / 2);
  EXPECT_GE(at[1] - at[0], lease / 2);
  EXPECT_EQ(observer.heartbeats(), answers);
  // Two visibility extensions of a whole lease (rounded up to 2 s), none after the refusal.
  const auto visibility = queue.visibility_entries();
  ASSERT_EQ(visibility.size(), 2u);
  for (const auto& entry : visibility) {
    EXPECT_EQ(entry.message_id, id);
    EXPECT_EQ(entry.timeout, 2s);
  }
  EXPECT_TRUE(queue.deleted(id));
}

// A throttled extension must not end the heartbeat (the claim is still ours until its lease
// ends): it is retried after an eighth of a lease, without touching the visibility meanwhile.
TEST(ListenerContainer, UnansweredExtensionIsRetriedSoonAndTheHeartbeatGoesOn) {
  event::EventLoop loop;
  FakeQueue queue(FakeQueue::Options{.second = 1s});
  RecordingObserver observer;
  const auto id = queue.send("long");
  constexpr auto lease = 2400ms;
  const std::vector answers{ClaimExtension::Unanswered, ClaimExtension::Extended,
                            ClaimExtension::Lost};
  const auto at = heartbeat_one_delivery(queue, observer, lease, answers, 0ms);

  ASSERT_EQ(at.size(), 3u);
  EXPECT_GE(at[0], lease / 2);
  EXPECT_GE(at[1] - at[0], lease / 8);
  EXPECT_LT(at[1] - at[0], lease / 2) << "the retry must come sooner than the next half lease";
  EXPECT_GE(at[2] - at[1], lease / 2);
  EXPECT_EQ(observer.heartbeats(), answers);
  // Only the answered extension stretched the visibility.
  const auto visibility = queue.visibility_entries();
  ASSERT_EQ(visibility.size(), 1u);
  EXPECT_EQ(visibility.front().message_id, id);
  EXPECT_TRUE(queue.deleted(id));
}

TEST(ListenerContainer, HandlerThatForgetsToStopItsHeartbeatIsStoppedBeforeTheAck) {
  event::EventLoop loop;
  FakeQueue queue;
  RecordingObserver observer;
  queue.send("m");
  std::atomic<int> extends{0};
  ListenerContainer container(
      loop, queue,
      [&](const Message&, LeaseHeartbeat& heartbeat) -> Task<Disposition> {
        heartbeat.start(
            [&]() -> Task<ClaimExtension> {
              ++extends;
              co_return ClaimExtension::Extended;
            },
            100ms);
        const bool extended = co_await eventually_on(loop, [&] { return extends.load() >= 1; });
        EXPECT_TRUE(extended);
        co_return Ack{};  // no stop()
      },
      fast_config(), &observer);
  Running running(container);
  ASSERT_TRUE(eventually([&] { return queue.remaining() == 0; }));
  const int after_ack = extends.load();
  std::this_thread::sleep_for(200ms);
  running.stop();
  EXPECT_EQ(extends.load(), after_ack);
}

TEST(ListenerContainer, EveryReceiveErrorBacksOffExponentiallyWithJitter) {
  event::EventLoop loop;
  FakeQueue queue;
  FaultInjectingQueue faulty(queue);
  RecordingObserver observer;
  faulty.fail_receives(5, {.error_class = ErrorClass::Permanent, .code = "AccessDenied"});
  const auto id = queue.send("m");
  ASSERT_TRUE(acked_until_deleted(faulty, queue, id, observer));
  const auto errors = observer.receive_errors();
  ASSERT_EQ(errors.size(), 5u);
  // base 5 ms, cap 40 ms, equal jitter: attempt n waits within [d/2, d], d = min(40, 5 * 2^n).
  const std::vector<std::int64_t> ceilings{5, 10, 20, 40, 40};
  for (std::size_t i = 0; i < errors.size(); ++i) {
    EXPECT_EQ(errors[i].first.code, "AccessDenied");
    EXPECT_GE(errors[i].second.count(), ceilings[i] / 2) << i;
    EXPECT_LE(errors[i].second.count(), ceilings[i]) << i;
  }
}

TEST(ListenerContainer, ThrottlingAndTransientReceiveErrorsBackOffToo) {
  event::EventLoop loop;
  FakeQueue queue;
  FaultInjectingQueue faulty(queue);
  RecordingObserver observer;
  faulty.fail_receives(1, {.error_class = ErrorClass::Throttling, .code = "RequestThrottled"});
  const auto id = queue.send("m");
  ASSERT_TRUE(acked_until_deleted(faulty, queue, id, observer));
  ASSERT_EQ(observer.receive_errors().size(), 1u);
  EXPECT_GE(observer.receive_errors()[0].second.count(), 2);
}

TEST(ListenerContainer, HandlerExceptionLeavesTheMessageAndTheOthersGoOn) {
  event::EventLoop loop;
  FakeQueue queue;
  RecordingObserver observer;
  const auto bad = queue.send("bad");
  const auto good = queue.send("good");
  auto config = fast_config();
  config.max_in_flight = 1;
  ListenerContainer container(
      loop, queue,
      [](const Message& message, LeaseHeartbeat&) -> Task<Disposition> {
        if (message.body == "bad") throw std::runtime_error("broken invariant");
        co_return Ack{};
      },
      config, &observer);
  Running running(container);
  ASSERT_TRUE(eventually([&] { return queue.deleted(good); }));
  running.stop();
  EXPECT_FALSE(queue.deleted(bad));
  ASSERT_FALSE(observer.handler_errors().empty());
  EXPECT_EQ(observer.handler_errors()[0], bad);
}

// Throws where the port promises an error value: a broken adapter, as decoders once were.
class ThrowingQueue final : public ForwardingQueue {
 public:
  using ForwardingQueue::ForwardingQueue;
  bool throw_on_receive = false;
  int receives_before_throwing = -1;  // >= 0: that many receives answer, then they throw
  Task<Received> receive(int max_messages, std::chrono::seconds wait,
                         std::stop_token stop) override {
    if (throw_on_receive || receives_before_throwing-- == 0) {
      throw std::runtime_error("reply decoder bug");
    }
    co_return co_await ForwardingQueue::receive(max_messages, wait, std::move(stop));
  }
  Task<std::expected<void, Error>> send_to_dlq(std::string_view,
                                               const MessageAttributes&) override {
    throw std::runtime_error("attribute encoder bug");
    co_return std::expected<void, Error>{};
  }
};

TEST(ListenerContainer, AReceiverThatThrowsIsReportedAndStopsTheContainerRatherThanDyingSilently) {
  event::EventLoop loop;
  FakeQueue fake;
  ThrowingQueue queue(fake);
  queue.throw_on_receive = true;
  RecordingObserver observer;
  int failures = 0;
  auto config = fast_config();
  config.on_failure = [&] { ++failures; };
  ListenerContainer container(loop, queue, always(Ack{}), config, &observer);
  container.run();  // returns by itself: nobody asked it to stop
  EXPECT_EQ(observer.thread_exceptions(), std::vector<std::string>{"receiver"});
  EXPECT_EQ(failures, 1);
}

// The stop after a dead receiver still waits for the handlers, however long: so the owner
// hears of the failure at once, not when the stop ends, and bounds it (run exits 1).
TEST(ListenerContainer, AReceiverThatDiesTellsTheOwnerAtOnceWhileAHandlerStillRuns) {
  event::EventLoop loop;
  FakeQueue fake;
  ThrowingQueue queue(fake);
  queue.receives_before_throwing = 1;
  const auto held = fake.send("held");
  std::atomic<int> started{0};
  std::atomic<int> failures{0};
  LoopGate gate(loop);
  auto config = fast_config();
  config.receivers = 1;
  config.on_failure = [&] { ++failures; };
  RecordingObserver observer;
  ListenerContainer container(loop, queue, ack_when_released(started, gate), config, &observer);
  std::thread running([&] { container.run(); });
  ASSERT_TRUE(eventually([&] { return failures.load() == 1; }));
  EXPECT_EQ(started.load(), 1) << "the held handler is still running";
  gate.release();
  running.join();  // returns by itself once the handler finished
  EXPECT_TRUE(fake.deleted(held));
  EXPECT_EQ(failures.load(), 1);
}

TEST(ListenerContainer, AnExceptionOutsideTheHandlerIsReportedAndTheOthersGoOn) {
  event::EventLoop loop;
  FakeQueue fake;
  ThrowingQueue queue(fake);
  RecordingObserver observer;
  const auto poisoned = fake.send("dead-letter me");
  const auto fine = fake.send("ack me");
  auto config = fast_config();
  config.max_in_flight = 1;
  ListenerContainer container(
      loop, queue,
      [](const Message& message, LeaseHeartbeat&) -> Task<Disposition> {
        if (message.body == "ack me") co_return Ack{};
        co_return DeadLetter{.reason = "INVALID_MESSAGE"};
      },
      config, &observer);
  Running running(container);
  ASSERT_TRUE(eventually([&] { return fake.deleted(fine); })) << "the one slot is free again";
  running.stop();  // returns: the failed delivery no longer counts as in flight
  EXPECT_FALSE(fake.deleted(poisoned)) << "left alone, it returns after its visibility timeout";
  EXPECT_EQ(observer.thread_exceptions(), std::vector<std::string>{"worker"});
}

TEST(ListenerContainer, ShutdownFinishesInFlightReturnsUnstartedAndFlushesAcks) {
  event::EventLoop loop;
  // One queue second = 100 ms: the receiver's 20 s long poll lasts 2 s, long enough to be in
  // progress when the stop arrives.
  FakeQueue queue(FakeQueue::Options{.second = 100ms});
  RecordingObserver observer;
  const auto first = queue.send("a");
  const auto second = queue.send("b");
  auto config = fast_config();
  config.max_in_flight = 3;
  config.flush_interval = 1h;  // acks leave only with the shutdown flush
  LoopGate release(loop);
  std::atomic<int> started{0};
  ListenerContainer container(loop, queue, ack_when_released(started, release), config, &observer);
  std::atomic<bool> returned{false};
  std::thread runner([&] {
    container.run();
    returned = true;
  });

  ASSERT_TRUE(eventually([&] { return started.load() == 2; }));
  ASSERT_TRUE(eventually([&] { return queue.receive_requests().size() == 2; }));
  container.request_stop();
  const auto late = queue.send("c");  // arrives in the poll that is still open
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(returned.load()) << "run() must wait for in-flight handlers";
  release.release(2);
  runner.join();

  EXPECT_EQ(started.load(), 2) << "nothing starts after the stop";
  EXPECT_TRUE(queue.deleted(first));
  EXPECT_TRUE(queue.deleted(second));
  EXPECT_FALSE(queue.deleted(late));
  const auto visibility = queue.visibility_entries();
  ASSERT_EQ(visibility.size(), 1u);
  EXPECT_EQ(visibility[0].message_id, late);
  EXPECT_EQ(visibility[0].timeout, 0s);
  EXPECT_EQ(observer.returned_unstarted(), 1u);
  EXPECT_EQ(queue.visible(), 1u) << "the unstarted message is available again at once";
  EXPECT_TRUE(observer.grace_exceeded().empty());
}

TEST(ListenerContainer, HandlerOutlivingTheGracePeriodIsReportedAndStillAcked) {
  event::EventLoop loop;
  FakeQueue queue;
  RecordingObserver observer;
  const auto id = queue.send("slow");
  auto config = fast_config();
  config.shutdown_grace = 10ms;
  LoopGate release(loop);
  std::atomic<int> started{0};
  ListenerContainer container(loop, queue, ack_when_released(started, release), config, &observer);
  std::thread runner([&] { container.run(); });
  ASSERT_TRUE(eventually([&] { return started.load() == 1; }));
  container.request_stop();
  ASSERT_TRUE(eventually([&] { return !observer.grace_exceeded().empty(); }));
  release.release();
  runner.join();
  EXPECT_EQ(observer.grace_exceeded(), std::vector<std::size_t>{1});
  EXPECT_TRUE(queue.deleted(id));
}

// Deliveries are tasks of one loop: one whose handler waits (a bank that does not answer)
// holds its own slot only, and every other delivery goes through meanwhile.
TEST(ListenerContainer, AStalledDeliveryHoldsUpNoOther) {
  event::EventLoop loop;
  FakeQueue queue;
  RecordingObserver observer;
  const auto stalled = queue.send("stall");
  std::vector<std::string> others;
  for (int i = 0; i < 20; ++i) others.push_back(queue.send("go " + std::to_string(i)));
  LoopGate gate(loop);
  auto config = fast_config();
  config.max_in_flight = 2;
  ListenerContainer container(
      loop, queue,
      [&](const Message& message, LeaseHeartbeat&) -> Task<Disposition> {
        if (message.body == "stall") co_await gate.pass();
        co_return Ack{};
      },
      config, &observer);
  Running running(container);
  ASSERT_TRUE(eventually([&] {
    return std::all_of(others.begin(), others.end(),
                       [&](const auto& id) { return queue.deleted(id); });
  })) << "twenty deliveries through the one slot the stalled one leaves";
  EXPECT_FALSE(queue.deleted(stalled));
  gate.release();
  ASSERT_TRUE(eventually([&] { return queue.deleted(stalled); }));
  running.stop();
}

TEST(ListenerContainer, StopBeforeRunReturnsWithoutTouchingTheQueue) {
  event::EventLoop loop;
  FakeQueue queue;
  queue.send("m");
  ListenerContainer container(loop, queue, always(Ack{}), fast_config());
  container.request_stop();
  container.run();
  EXPECT_EQ(queue.remaining(), 1u);
  EXPECT_TRUE(queue.delete_calls().empty());
}

}  // namespace
}  // namespace ic::consumer
