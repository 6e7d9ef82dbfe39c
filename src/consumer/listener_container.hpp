// The SQS listener container: long-poll receivers feed a bounded worker pool; each handler's
// Disposition becomes a batched delete, a visibility change or a DLQ forward; long handlers are
// heartbeated; request_stop() shuts down without losing a message. Reusable: it knows the
// queue port, the Disposition vocabulary and nothing about the business (docs/design.md §4).
//
//   ListenerContainer container(queue, [&](const Message& m, consumer::LeaseHeartbeat& hb) {
//     return service.handle(m.body, hb);
//   }, {.workers = 32});
//   std::jthread signals([&] { wait_for_sigterm(); container.request_stop(); });
//   container.run();  // returns once stopped, in-flight work finished and acks flushed
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "consumer/ack_batcher.hpp"
#include "consumer/backoff.hpp"
#include "consumer/disposition.hpp"
#include "consumer/heartbeat_scheduler.hpp"
#include "consumer/intake_gate.hpp"
#include "consumer/lease_heartbeat.hpp"
#include "consumer/listener_observer.hpp"
#include "consumer/quarantine.hpp"
#include "consumer/queue_port.hpp"
#include "core/random.hpp"
#include "core/thread_annotations.hpp"

namespace ic::consumer {

struct ListenerConfig {
  std::size_t workers = 32;
  std::size_t receivers = 1;  // concurrent long polls
  // Messages received beyond the free workers, so that busy workers are not fed one receive per
  // message. Prefetched messages are in flight (their visibility runs) while they wait: see
  // prefetch_max_age. 0: ask only for free workers.
  std::size_t prefetch = 0;
  // A prefetched message that waited longer than this is handed back (visibility 0) instead of
  // started: its visibility must not lapse before the heartbeat's first extension. Keep it well
  // under half the queue's visibility timeout.
  Millis prefetch_max_age{15000};
  std::chrono::seconds wait_time{20};  // WaitTimeSeconds of each receive
  // How long a poll in flight at a stop may still answer before it is cut. SQS may already
  // have chosen messages for it, and a cut poll leaves them invisible for the visibility
  // timeout (one receive counted, nobody working on them); what it answers is handed back.
  Millis poll_drain{500};
  Millis flush_interval{100};            // longest an ack waits for its batch to fill
  Millis shutdown_grace{30000};          // how long in-flight handlers get after a stop
  double retry_jitter_ratio = 0.1;       // RetryLater{after} waits after * [1, 1 + ratio)
  Millis dlq_failure_retry{30000};       // visibility after a failed DLQ forward
  ExponentialBackoff receive_backoff{};  // after each failed receive, growing per failure
  std::string key_attribute;             // DLQ attribute naming DeadLetter::key; empty: not carried
  std::optional<std::uint64_t> seed;     // jitter seed; random when absent
  // Consulted before each receive (paused: no receive; a probe: one message); null: always open.
  IntakeGate* intake = nullptr;
  // Keeps the reason of a message whose body alone fills the DLQ's size limit, before its
  // body-only copy; null: no body-only copy (the message waits for SQS's redrive policy).
  QuarantinePort* quarantine = nullptr;
};

using Handler = std::function<consumer::Disposition(const Message&, consumer::LeaseHeartbeat&)>;

// Thread-safety: run() is called once, from one thread; request_stop() may be called from
// any thread, before or during run() (it is not async-signal-safe: wire signals through a
// thread that waits for them). The handler runs on `workers` threads concurrently.
// Ownership: `queue` and `observer` must outlive the container.
// Shutdown gives a long poll in progress poll_drain to answer, then cuts it short where the
// queue port can (receive_stoppable); what a poll still returns is handed back with
// visibility 0, as is every prefetched message not started. Then it waits for the handlers'
// remaining time. Handlers still running after shutdown_grace are reported and still awaited:
// the container never abandons a delivery it started.
// Flow control: a receiver polls at once while a worker is idle; while every worker is busy it
// waits until a whole batch (10) fits into the free workers plus `prefetch`.
class ListenerContainer {
 public:
  ListenerContainer(QueuePort& queue, Handler handler, ListenerConfig config,
                    ListenerObserver* observer = nullptr);
  ~ListenerContainer();
  ListenerContainer(const ListenerContainer&) = delete;
  ListenerContainer& operator=(const ListenerContainer&) = delete;

  void run();
  void request_stop();

 private:
  struct Received {
    Message message;
    std::chrono::steady_clock::time_point at;
  };

  void receive_loop();
  // Caps `asked` by the intake gate, giving the slots it refuses back; 0 when paused.
  [[nodiscard]] int admit(int asked, IntakeDecision& decision);
  [[nodiscard]] int reserve_slots() REQUIRES(mutex_);
  [[nodiscard]] int slots_to_ask() const REQUIRES(mutex_);  // what reserve_slots would take
  void worker_loop();
  void process(const Message& message);
  void apply(const Message& message, const consumer::Disposition& disposition, Millis elapsed);
  // Sends the smaller copies of kDeadLetterCopies in turn while SQS refuses them for good;
  // the body-only one only after the reason is quarantined.
  [[nodiscard]] std::expected<void, Error> forward_to_dlq(const Message& message,
                                                          const DeadLetter& dead);
  [[nodiscard]] std::expected<void, Error> quarantine(const Message& message,
                                                      const DeadLetter& dead);
  void retry_after(const Message& message, Millis after);
  void return_unstarted(std::vector<Message> messages);
  void finish_shutdown();

  QueuePort& queue_;
  Handler handler_;
  const ListenerConfig config_;
  ListenerObserver& observer_;
  SeededRandom jitter_;
  AckBatcher batcher_;
  HeartbeatScheduler heartbeats_;

  Mutex mutex_;
  // Each waits for one thing, so that a finished message wakes no more threads than need it.
  CondVar changed_;  // slots freed, or stop: receivers and the shutdown's drain wait on it
  CondVar work_;     // a message is ready, or stop: workers
  CondVar stopped_;  // stop: run()
  bool stop_requested_ GUARDED_BY(mutex_) = false;
  std::stop_source stop_source_;                // cuts long polls short, poll_drain after the stop
  std::size_t polling_ GUARDED_BY(mutex_) = 0;  // receives in flight
  // workers + prefetch, minus the messages asked for, received and not started, and running
  std::ptrdiff_t free_slots_ GUARDED_BY(mutex_) = 0;
  std::deque<Received> ready_ GUARDED_BY(mutex_);  // received, not started
  std::size_t in_flight_ GUARDED_BY(mutex_) = 0;
  std::vector<std::thread> workers_;
  std::vector<std::thread> receivers_;
};

}  // namespace ic::consumer
