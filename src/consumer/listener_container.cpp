#include "consumer/listener_container.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <utility>
#include <variant>

#include "consumer/dead_letter.hpp"
#include "consumer/delivery_heartbeat.hpp"
#include "core/backoff.hpp"
#include "core/overloaded.hpp"
#include "core/sha256.hpp"
#include "core/text_escape.hpp"
#include "core/thread_guard.hpp"

namespace ic::consumer {

namespace {

ListenerObserver& no_op_observer() {
  static ListenerObserver observer;
  return observer;
}

std::uint64_t seed_of(const ListenerConfig& config) {
  return config.seed ? *config.seed : std::random_device{}();
}

}  // namespace

ListenerContainer::ListenerContainer(QueuePort& queue, Handler handler, ListenerConfig config,
                                     ListenerObserver* observer)
    : queue_(queue),
      handler_(std::move(handler)),
      config_(std::move(config)),
      observer_(observer ? *observer : no_op_observer()),
      jitter_(seed_of(config_)),
      batcher_(queue_, observer_, config_.flush_interval),
      free_slots_(static_cast<std::ptrdiff_t>(config_.workers + config_.prefetch)) {
  if (config_.workers == 0 || config_.receivers == 0 || !handler_) {
    throw std::invalid_argument("ListenerContainer needs a handler, workers and receivers");
  }
  if (config_.prefetch > 0 && config_.prefetch_max_age <= Millis{0}) {
    throw std::invalid_argument("ListenerContainer: a prefetch needs a positive prefetch_max_age");
  }
}

ListenerContainer::~ListenerContainer() {
  request_stop();
  stop_source_.request_stop();
  for (auto& thread : receivers_) {
    if (thread.joinable()) thread.join();
  }
  for (auto& thread : workers_) {
    if (thread.joinable()) thread.join();
  }
}

void ListenerContainer::request_stop() {
  {
    MutexLock lock(mutex_);
    stop_requested_ = true;
  }
  changed_.notify_all();
  work_.notify_all();
  stopped_.notify_all();
}

void ListenerContainer::run() {
  batcher_.start();
  for (std::size_t i = 0; i < config_.workers; ++i) {
    workers_.emplace_back([this] { worker_loop(); });
  }
  for (std::size_t i = 0; i < config_.receivers; ++i) {
    // A receiver that died would leave a process that looks alive and consumes nothing: stop.
    receivers_.emplace_back([this] {
      if (!run_guarded("receiver", &observer_, [this] { receive_loop(); })) request_stop();
    });
  }
  {
    MutexLock lock(mutex_);
    stopped_.wait(mutex_, [this]() REQUIRES(mutex_) { return stop_requested_; });
  }
  finish_shutdown();
}

void ListenerContainer::finish_shutdown() {
  // Workers take nothing new once stop is requested: what is queued goes back at once.
  std::vector<Message> unstarted;
  {
    MutexLock lock(mutex_);
    for (auto& received : ready_) unstarted.push_back(std::move(received.message));
    ready_.clear();
  }
  return_unstarted(std::move(unstarted));
  {
    MutexLock lock(mutex_);
    changed_.wait_for(mutex_, config_.poll_drain,
                      [this]() REQUIRES(mutex_) { return polling_ == 0; });
  }
  stop_source_.request_stop();
  {
    MutexLock lock(mutex_);
    const auto idle = [this]() REQUIRES(mutex_) { return in_flight_ == 0; };
    if (!changed_.wait_for(mutex_, config_.shutdown_grace, idle)) {
      observer_.on_grace_exceeded(in_flight_);
      changed_.wait(mutex_, idle);
    }
  }
  for (auto& thread : workers_) thread.join();
  for (auto& thread : receivers_) thread.join();  // each hands back what its last poll brought
  workers_.clear();
  receivers_.clear();
  batcher_.stop();  // flushes every buffered delete and visibility change
}

void ListenerContainer::receive_loop() {
  int failures = 0;
  while (true) {
    int asked = 0;
    {
      MutexLock lock(mutex_);
      changed_.wait(mutex_, [this, &asked]() REQUIRES(mutex_) {
        return stop_requested_ || (asked = reserve_slots()) > 0;
      });
      if (stop_requested_) return;
    }
    IntakeDecision decision;
    asked = admit(asked, decision);
    if (asked == 0) {
      MutexLock lock(mutex_);
      changed_.wait_for(mutex_, decision.recheck,
                        [this]() REQUIRES(mutex_) { return stop_requested_; });
      continue;
    }
    {
      MutexLock lock(mutex_);
      if (stop_requested_) return;  // the slots it reserved no longer matter
      ++polling_;
    }
    auto received = queue_.receive_stoppable(asked, config_.wait_time, stop_source_.get_token());
    bool stopping = false;
    {
      MutexLock lock(mutex_);
      --polling_;
      stopping = stop_requested_;
    }
    if (stopping) changed_.notify_all();  // the shutdown's poll drain waits for it
    if (config_.intake != nullptr) {
      config_.intake->after_receive(decision, received ? received->size() : 0);
    }
    if (!received) {
      const auto delay = backoff_delay(failures++, config_.receive_backoff.base,
                                       config_.receive_backoff.cap, Jitter::Equal, jitter_);
      observer_.on_receive_error(received.error(), delay);
      MutexLock lock(mutex_);
      free_slots_ += asked;
      changed_.notify_all();
      changed_.wait_for(mutex_, delay, [this]() REQUIRES(mutex_) { return stop_requested_; });
      continue;
    }
    failures = 0;
    observer_.on_received(received->size());  // an empty poll also proves the queue answers
    std::vector<Message> late;
    std::size_t queued = 0;
    {
      MutexLock lock(mutex_);
      free_slots_ += asked - static_cast<std::ptrdiff_t>(received->size());
      if (stop_requested_) {
        late = std::move(*received);
      } else {
        const auto now = std::chrono::steady_clock::now();
        for (auto& message : *received) ready_.push_back({std::move(message), now});
        queued = received->size();
      }
    }
    // One worker per message: waking every idle worker for each one only burns CPU.
    for (std::size_t i = 0; i < queued; ++i) work_.notify_one();
    if (static_cast<std::ptrdiff_t>(received->size()) < asked) changed_.notify_all();
    return_unstarted(std::move(late));
  }
}

int ListenerContainer::admit(int asked, IntakeDecision& decision) {
  if (config_.intake == nullptr) return asked;
  decision = config_.intake->before_receive();
  const int allowed = std::clamp(decision.max_messages, 0, asked);
  if (allowed == asked) return asked;
  {
    MutexLock lock(mutex_);
    free_slots_ += asked - allowed;
  }
  changed_.notify_all();
  return allowed;
}

int ListenerContainer::reserve_slots() {
  const int asked = slots_to_ask();
  free_slots_ -= asked;
  return asked;
}

int ListenerContainer::slots_to_ask() const {
  if (free_slots_ <= 0) return 0;
  const auto busy_or_assigned = static_cast<std::ptrdiff_t>(in_flight_ + ready_.size());
  const bool worker_idle = busy_or_assigned < static_cast<std::ptrdiff_t>(config_.workers);
  // Asking for fewer than a batch while every worker is busy is what starved the receiver: one
  // ReceiveMessage per finished message.
  const auto batch = std::min<std::ptrdiff_t>(
      kMaxReceiveMessages, static_cast<std::ptrdiff_t>(config_.workers + config_.prefetch));
  if (!worker_idle && free_slots_ < batch) return 0;
  return static_cast<int>(std::min<std::ptrdiff_t>(free_slots_, kMaxReceiveMessages));
}

void ListenerContainer::worker_loop() {
  while (true) {
    std::optional<Message> message;
    std::vector<Message> stale;
    {
      MutexLock lock(mutex_);
      work_.wait(mutex_, [this]() REQUIRES(mutex_) { return stop_requested_ || !ready_.empty(); });
      if (stop_requested_) return;
      const auto oldest_allowed = std::chrono::steady_clock::now() - config_.prefetch_max_age;
      while (!ready_.empty() && ready_.front().at < oldest_allowed) {
        stale.push_back(std::move(ready_.front().message));
        ready_.pop_front();
        ++free_slots_;
      }
      if (!ready_.empty()) {
        message = std::move(ready_.front().message);
        ready_.pop_front();
        // Reported under the lock so that the gauge never ends on a stale value.
        observer_.on_in_flight(++in_flight_);
      }
    }
    if (!stale.empty()) {
      changed_.notify_all();
      return_unstarted(std::move(stale));
    }
    if (!message) continue;
    // The message is left alone and returns after its visibility timeout; the worker goes on.
    run_guarded("worker", &observer_, [&] { process(*message); });
    bool wake = false;
    {
      MutexLock lock(mutex_);
      observer_.on_in_flight(--in_flight_);
      ++free_slots_;
      // While every worker is busy a receiver waits for a whole batch of free slots: waking
      // both receivers at each finished message (to find too few) was two context switches per
      // message. The shutdown's drain waits on the same variable, so a stop always wakes.
      wake = stop_requested_ || slots_to_ask() > 0;
    }
    if (wake) changed_.notify_all();
  }
}

void ListenerContainer::process(const Message& message) {
  const auto started = std::chrono::steady_clock::now();
  DeliveryHeartbeat heartbeat(heartbeats_, queue_, observer_, message);
  consumer::Disposition disposition;
  try {
    disposition = handler_(message, heartbeat);
  } catch (const std::exception& error) {
    heartbeat.stop();
    observer_.on_handler_error(message.message_id, error.what());
    return;
  } catch (...) {
    heartbeat.stop();
    observer_.on_handler_error(message.message_id, "non-standard exception");
    return;
  }
  // The handler should have stopped it already; the final action must not race a heartbeat.
  heartbeat.stop();
  const auto elapsed =
      std::chrono::duration_cast<Millis>(std::chrono::steady_clock::now() - started);
  apply(message, disposition, elapsed);
}

void ListenerContainer::apply(const Message& message, const consumer::Disposition& disposition,
                              Millis elapsed) {
  const DeleteEntry remove{.message_id = message.message_id,
                           .receipt_handle = message.receipt_handle};
  std::visit(Overloaded{
                 [&](const consumer::Ack&) {
                   observer_.on_disposition(DispositionKind::Ack, "", elapsed);
                   batcher_.add_delete(remove);
                 },
                 [&](const consumer::RetryLater& retry) {
                   observer_.on_disposition(DispositionKind::RetryLater, retry.reason, elapsed);
                   retry_after(message, retry.after);
                 },
                 [&](const consumer::DeadLetter& dead) {
                   observer_.on_disposition(DispositionKind::DeadLetter, dead.reason, elapsed);
                   observer_.on_dead_letter(message, dead);
                   auto sent = forward_to_dlq(message, dead);
                   if (sent) {
                     batcher_.add_delete(remove);
                     return;
                   }
                   // Deleting now would lose the message: it comes back and is dead-lettered again
                   // once the DLQ answers.
                   observer_.on_dlq_send_failed(message.message_id, sent.error());
                   retry_after(message, config_.dlq_failure_retry);
                 },
             },
             disposition);
}

std::expected<void, Error> ListenerContainer::forward_to_dlq(const Message& message,
                                                             const DeadLetter& dead) {
  std::vector<std::pair<DeadLetterCopy, MessageAttributes>> copies;
  for (const DeadLetterCopy copy : kDeadLetterCopies) {
    // Without a durable reason a body-only copy would read as dead-lettered by SQS itself,
    // which `redrive` moves back by default.
    if (copy == DeadLetterCopy::BodyOnly && config_.quarantine == nullptr) break;
    auto attributes = dead_letter_attributes(message, dead, config_.key_attribute, copy);
    // A smaller copy that leaves nothing out would only be refused again.
    if (copies.empty() || copies.back().second != attributes) {
      copies.emplace_back(copy, std::move(attributes));
    }
  }
  for (std::size_t i = 0;; ++i) {
    const auto& [copy, attributes] = copies[i];
    if (copy == DeadLetterCopy::BodyOnly) {
      if (auto kept = quarantine(message, dead); !kept) return kept;
    }
    auto sent = queue_.send_to_dlq(message.body, attributes);
    if (sent) {
      const auto dropped = dropped_producer_attributes(message, attributes);
      if (!dropped.empty()) observer_.on_dlq_attributes_dropped(message.message_id, dropped);
      return sent;
    }
    // A transient failure is retried later with the same copy; only a refusal of this copy
    // (too large) calls for a smaller one.
    if (sent.error().retryable() || sent.error().ambiguous || i + 1 == copies.size()) {
      return sent;
    }
    observer_.on_dlq_copy_refused(message.message_id, to_string(copies[i + 1].first), sent.error());
  }
}

std::expected<void, Error> ListenerContainer::quarantine(const Message& message,
                                                         const DeadLetter& dead) {
  const QuarantineRecord record{.body_sha256 = sha256_hex(message.body),
                                .failure_reason = dead.reason,
                                .failure_detail = escape_bounded(dead.detail),
                                .source_message_id = message.message_id};
  auto kept = config_.quarantine->put(record);
  if (kept) observer_.on_quarantined(message, record);
  return kept;
}

void ListenerContainer::retry_after(const Message& message, Millis after) {
  batcher_.add_visibility(
      {.message_id = message.message_id,
       .receipt_handle = message.receipt_handle,
       .timeout = retry_visibility(after, config_.retry_jitter_ratio, jitter_.uniform01())});
}

void ListenerContainer::return_unstarted(std::vector<Message> messages) {
  if (messages.empty()) return;
  for (const auto& message : messages) {
    batcher_.add_visibility({.message_id = message.message_id,
                             .receipt_handle = message.receipt_handle,
                             .timeout = std::chrono::seconds{0}});
  }
  observer_.on_returned_unstarted(messages.size());
}

}  // namespace ic::consumer
