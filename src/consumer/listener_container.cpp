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

Millis since(const event::EventLoop& loop, SteadyInstant start) {
  return std::chrono::duration_cast<Millis>(loop.now() - start);
}

}  // namespace

ListenerContainer::ListenerContainer(event::EventLoop& loop, QueuePort& queue, Handler handler,
                                     ListenerConfig config, ListenerObserver* observer)
    : loop_(loop),
      queue_(queue),
      handler_(std::move(handler)),
      config_(std::move(config)),
      observer_(observer ? *observer : no_op_observer()),
      jitter_(seed_of(config_)),
      batcher_(loop_, queue_, observer_, config_.flush_interval),
      changed_(loop_),
      free_slots_(static_cast<std::ptrdiff_t>(config_.max_in_flight + config_.prefetch)) {
  if (config_.max_in_flight == 0 || config_.receivers == 0 || !handler_) {
    throw std::invalid_argument(
        "ListenerContainer needs a handler, an in-flight limit and receivers");
  }
  if (config_.prefetch > 0 && config_.prefetch_max_age <= Millis{0}) {
    throw std::invalid_argument("ListenerContainer: a prefetch needs a positive prefetch_max_age");
  }
}

void ListenerContainer::request_stop() {
  loop_.post([this] { begin_stop(); });
}

void ListenerContainer::run() {
  loop_.post([this] {
    if (stop_requested_) return;  // stopped before it ran: the queue is never touched
    for (std::size_t i = 0; i < config_.receivers; ++i) {
      ++receivers_;
      spawn(receive_loop(), [this](std::exception_ptr error) {
        // A receiver that died would leave a process that looks alive and consumes nothing.
        report_failure("receiver", &observer_, error);
        if (error && !std::exchange(failed_, true)) {
          begin_stop();
          if (config_.on_failure) config_.on_failure();
        }
        --receivers_;
        changed_.notify_all();
      });
    }
  });
  loop_.run_until([this] { return finished_; });
}

void ListenerContainer::begin_stop() {
  if (std::exchange(stop_requested_, true)) return;
  changed_.notify_all();
  spawn(shutdown(), [this](std::exception_ptr error) {
    report_failure("shutdown", &observer_, error);
    finished_ = true;
  });
}

Task<bool> ListenerContainer::wait_for(event::WaitQueue& queue, const std::function<bool()>& done,
                                       std::optional<SteadyInstant> deadline) {
  while (!done()) {
    const event::Wake wake = co_await queue.wait(deadline);
    if (wake == event::Wake::TimedOut) co_return done();
  }
  co_return true;
}

Task<void> ListenerContainer::shutdown() {
  // Nothing new starts once stop is requested: what is queued goes back at once.
  std::vector<Message> unstarted;
  for (auto& received : ready_) unstarted.push_back(std::move(received.message));
  ready_.clear();
  return_unstarted(std::move(unstarted));
  (void)co_await wait_for(
      changed_, [this] { return polling_ == 0; }, loop_.now() + config_.poll_drain);
  poll_stop_.request_stop();
  const bool idle = co_await wait_for(
      changed_, [this] { return in_flight_ == 0; }, loop_.now() + config_.shutdown_grace);
  if (!idle) {
    observer_.on_grace_exceeded(in_flight_);
    (void)co_await wait_for(
        changed_, [this] { return in_flight_ == 0; }, std::nullopt);
  }
  // Each receiver hands back what its last poll brought before it ends.
  (void)co_await wait_for(
      changed_, [this] { return receivers_ == 0; }, std::nullopt);
  co_await batcher_.stop();  // flushes every buffered delete and visibility change
}

Task<void> ListenerContainer::receive_loop() {
  int failures = 0;
  while (true) {
    int asked = 0;
    while (!stop_requested_ && (asked = reserve_slots()) == 0) co_await changed_.wait();
    if (stop_requested_) co_return;
    IntakeDecision decision;
    asked = admit(asked, decision);
    if (asked == 0) {
      // Paused: look again after decision.recheck; a freed slot or a stop looks sooner.
      co_await changed_.wait(loop_.now() + decision.recheck);
      continue;
    }
    ++polling_;
    auto received = co_await queue_.receive(asked, config_.wait_time, poll_stop_.get_token());
    --polling_;
    if (stop_requested_) changed_.notify_all();  // the shutdown's poll drain waits for it
    if (config_.intake != nullptr) {
      config_.intake->after_receive(decision, received ? received->size() : 0);
    }
    if (!received) {
      const auto delay = backoff_delay(failures++, config_.receive_backoff.base,
                                       config_.receive_backoff.cap, Jitter::Equal, jitter_);
      observer_.on_receive_error(received.error(), delay);
      free_slots_ += asked;
      changed_.notify_all();
      (void)co_await wait_for(
          changed_, [this] { return stop_requested_; }, loop_.now() + delay);
      continue;
    }
    failures = 0;
    observer_.on_received(received->size());  // an empty poll also proves the queue answers
    free_slots_ += asked - static_cast<std::ptrdiff_t>(received->size());
    if (stop_requested_) {
      return_unstarted(std::move(*received));
    } else {
      const SteadyInstant now = loop_.now();
      for (auto& message : *received) ready_.push_back({std::move(message), now});
      dispatch();
    }
    if (static_cast<std::ptrdiff_t>(received->size()) < asked) changed_.notify_all();
  }
}

int ListenerContainer::admit(int asked, IntakeDecision& decision) {
  if (config_.intake == nullptr) return asked;
  decision = config_.intake->before_receive();
  const int allowed = std::clamp(decision.max_messages, 0, asked);
  if (allowed == asked) return asked;
  free_slots_ += asked - allowed;
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
  const bool slot_idle = busy_or_assigned < static_cast<std::ptrdiff_t>(config_.max_in_flight);
  // Asking for fewer than a batch while every slot is busy is what starved the receiver: one
  // ReceiveMessage per finished message.
  const auto batch = std::min<std::ptrdiff_t>(
      kMaxReceiveMessages, static_cast<std::ptrdiff_t>(config_.max_in_flight + config_.prefetch));
  if (!slot_idle && free_slots_ < batch) return 0;
  return static_cast<int>(std::min<std::ptrdiff_t>(free_slots_, kMaxReceiveMessages));
}

void ListenerContainer::dispatch() {
  std::vector<Message> stale;
  const SteadyInstant oldest_allowed = loop_.now() - config_.prefetch_max_age;
  while (!stop_requested_ && in_flight_ < config_.max_in_flight && !ready_.empty()) {
    Received next = std::move(ready_.front());
    ready_.pop_front();
    if (next.at < oldest_allowed) {
      stale.push_back(std::move(next.message));
      ++free_slots_;
      continue;
    }
    start(std::move(next.message));
  }
  if (!stale.empty()) {
    changed_.notify_all();
    return_unstarted(std::move(stale));
  }
}

void ListenerContainer::start(Message message) {
  observer_.on_in_flight(++in_flight_);
  // The message is left alone and returns after its visibility timeout; the others go on.
  spawn(process(std::move(message)), [this](std::exception_ptr error) {
    report_failure("worker", &observer_, error);
    finished_one();
  });
}

void ListenerContainer::finished_one() {
  observer_.on_in_flight(--in_flight_);
  ++free_slots_;
  dispatch();
  // While every slot is busy a receiver waits for a whole batch of free slots: waking it at
  // each finished message (to find too few) would be a wasted pass per message.
  if (stop_requested_ || slots_to_ask() > 0) changed_.notify_all();
}

Task<void> ListenerContainer::process(Message message) {
  const SteadyInstant started = loop_.now();
  DeliveryHeartbeat heartbeat(loop_, queue_, observer_, message);
  std::optional<Disposition> disposition;
  std::string failure;
  try {
    disposition = co_await handler_(message, heartbeat);
  } catch (const std::exception& error) {
    failure = error.what();
  } catch (...) {
    failure = "non-standard exception";
  }
  // The handler should have stopped it already; the final action must not race a heartbeat.
  co_await heartbeat.stop();
  if (!disposition) {
    observer_.on_handler_error(message.message_id, failure);
    co_return;
  }
  co_await apply(message, *disposition, since(loop_, started));
}

Task<void> ListenerContainer::apply(const Message& message, const Disposition& disposition,
                                    Millis elapsed) {
  const DeleteEntry remove{.message_id = message.message_id,
                           .receipt_handle = message.receipt_handle};
  if (std::holds_alternative<Ack>(disposition)) {
    observer_.on_disposition(DispositionKind::Ack, "", elapsed);
    batcher_.add_delete(remove);
    co_return;
  }
  if (const auto* retry = std::get_if<RetryLater>(&disposition)) {
    observer_.on_disposition(DispositionKind::RetryLater, retry->reason, elapsed);
    retry_after(message, retry->after);
    co_return;
  }
  const auto& dead = std::get<DeadLetter>(disposition);
  observer_.on_disposition(DispositionKind::DeadLetter, dead.reason, elapsed);
  observer_.on_dead_letter(message, dead);
  auto sent = co_await forward_to_dlq(message, dead);
  if (sent) {
    batcher_.add_delete(remove);
    co_return;
  }
  // Deleting now would lose the message: it comes back and is dead-lettered again once the
  // DLQ answers.
  observer_.on_dlq_send_failed(message.message_id, sent.error());
  retry_after(message, config_.dlq_failure_retry);
}

Task<std::expected<void, Error>> ListenerContainer::forward_to_dlq(const Message& message,
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
      auto kept = co_await quarantine(message, dead);
      if (!kept) co_return kept;
    }
    auto sent = co_await queue_.send_to_dlq(message.body, attributes);
    if (sent) {
      const auto dropped = dropped_producer_attributes(message, attributes);
      if (!dropped.empty()) observer_.on_dlq_attributes_dropped(message.message_id, dropped);
      co_return sent;
    }
    // A transient failure is retried later with the same copy; only a refusal of this copy
    // (too large) calls for a smaller one.
    if (sent.error().retryable() || sent.error().ambiguous || i + 1 == copies.size()) {
      co_return sent;
    }
    observer_.on_dlq_copy_refused(message.message_id, to_string(copies[i + 1].first), sent.error());
  }
}

Task<std::expected<void, Error>> ListenerContainer::quarantine(const Message& message,
                                                               const DeadLetter& dead) {
  const QuarantineRecord record{.body_sha256 = sha256_hex(message.body),
                                .failure_reason = dead.reason,
                                .failure_detail = escape_bounded(dead.detail),
                                .source_message_id = message.message_id};
  auto kept = co_await config_.quarantine->put(record);
  if (kept) observer_.on_quarantined(message, record);
  co_return kept;
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
