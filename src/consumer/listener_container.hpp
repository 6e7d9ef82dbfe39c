// The SQS listener container: long-poll receivers feed deliveries to tasks on one event loop,
// at most `max_in_flight` at a time; each handler's Disposition becomes a batched delete, a
// visibility change or a DLQ forward; long handlers are heartbeated; request_stop() shuts down
// without losing a message. Reusable: it knows the queue port, the Disposition vocabulary and
// nothing about the business (docs/design.md §4).
//
//   event::EventLoop loop;
//   ListenerContainer container(loop, queue, [&](const Message& m, LeaseHeartbeat& hb) {
//     return service.handle(m.body, hb);             // a Task<Disposition>
//   }, {.max_in_flight = 256});
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
#include <vector>

#include "consumer/ack_batcher.hpp"
#include "consumer/backoff.hpp"
#include "consumer/disposition.hpp"
#include "consumer/intake_gate.hpp"
#include "consumer/lease_heartbeat.hpp"
#include "consumer/listener_observer.hpp"
#include "consumer/quarantine.hpp"
#include "consumer/queue_port.hpp"
#include "core/random.hpp"
#include "event/wait_queue.hpp"

namespace ic::consumer {

struct ListenerConfig {
  // Deliveries handled at once: tasks on the loop, not threads, so hundreds cost little.
  std::size_t max_in_flight = 32;
  std::size_t receivers = 1;  // concurrent long polls
  // Messages received beyond the free slots, so that a full process is not fed one receive per
  // message. Prefetched messages are in flight (their visibility runs) while they wait: see
  // prefetch_max_age. 0: ask only for free slots.
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
  // Called on the loop's thread, once, when a receiver died and the container began to stop:
  // the stop still waits for every handler, so the owner bounds how long the process may take
  // to end (run: exit 1 within the grace and a few seconds). Null: nothing.
  std::function<void()> on_failure;
};

// Handles one delivery; the task runs on the container's loop.
using Handler = std::function<Task<Disposition>(const Message&, LeaseHeartbeat&)>;

// Thread-safety: run() is called once, from the thread that is to run `loop`; request_stop()
// may be called from any thread, before or during run() (it is not async-signal-safe: wire
// signals through a thread that waits for them). Everything else, handlers and the queue's
// calls included, runs on the loop's thread.
// Ownership: `loop`, `queue` and `observer` must outlive the container.
// Shutdown gives a long poll in progress poll_drain to answer, then cuts it short (the
// receive's stop token); what a poll still returns is handed back with visibility 0, as is
// every prefetched message not started. Then it waits for the handlers' remaining time.
// Handlers still running after shutdown_grace are reported and still awaited: the container
// never abandons a delivery it started.
// Flow control: a receiver polls at once while a slot is free; while every slot is busy it
// waits until a whole batch (10) fits into the free slots plus `prefetch`.
class ListenerContainer {
 public:
  ListenerContainer(event::EventLoop& loop, QueuePort& queue, Handler handler,
                    ListenerConfig config, ListenerObserver* observer = nullptr);
  ListenerContainer(const ListenerContainer&) = delete;
  ListenerContainer& operator=(const ListenerContainer&) = delete;

  void run();
  void request_stop();

 private:
  struct Received {
    Message message;
    SteadyInstant at;
  };

  Task<void> receive_loop();
  // Caps `asked` by the intake gate, giving the slots it refuses back; 0 when paused.
  [[nodiscard]] int admit(int asked, IntakeDecision& decision);
  [[nodiscard]] int reserve_slots();
  [[nodiscard]] int slots_to_ask() const;  // what reserve_slots would take
  // Starts what waits in ready_ while slots are free; hands back what waited too long.
  void dispatch();
  void start(Message message);
  void finished_one();
  Task<void> process(Message message);
  Task<void> apply(const Message& message, const Disposition& disposition, Millis elapsed);
  // Sends the smaller copies of kDeadLetterCopies in turn while SQS refuses them for good;
  // the body-only one only after the reason is quarantined.
  [[nodiscard]] Task<std::expected<void, Error>> forward_to_dlq(const Message& message,
                                                                const DeadLetter& dead);
  [[nodiscard]] Task<std::expected<void, Error>> quarantine(const Message& message,
                                                            const DeadLetter& dead);
  void retry_after(const Message& message, Millis after);
  void return_unstarted(std::vector<Message> messages);
  void begin_stop();
  Task<void> shutdown();
  // Waits on `queue` until `done()` or `deadline`; false when the deadline came first.
  Task<bool> wait_for(event::WaitQueue& queue, const std::function<bool()>& done,
                      std::optional<SteadyInstant> deadline);

  event::EventLoop& loop_;
  QueuePort& queue_;
  Handler handler_;
  const ListenerConfig config_;
  ListenerObserver& observer_;
  SeededRandom jitter_;
  AckBatcher batcher_;

  event::WaitQueue changed_;  // slots freed, a poll answered, or stop: receivers and shutdown
  bool stop_requested_ = false;
  bool finished_ = false;       // shutdown done: run() returns
  bool failed_ = false;         // a receiver died
  std::stop_source poll_stop_;  // cuts long polls short, poll_drain after the stop
  std::size_t polling_ = 0;     // receives in flight
  std::size_t receivers_ = 0;   // receiver tasks not finished
  // max_in_flight + prefetch, minus the messages asked for, received and not started, and
  // running
  std::ptrdiff_t free_slots_ = 0;
  std::deque<Received> ready_;  // received, not started
  std::size_t in_flight_ = 0;
};

}  // namespace ic::consumer
