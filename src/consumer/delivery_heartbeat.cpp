#include "consumer/delivery_heartbeat.hpp"

#include <algorithm>
#include <exception>

#include "consumer/backoff.hpp"
#include "core/thread_guard.hpp"

namespace ic::consumer {
namespace {

// The delay before another try after an unanswered extension. Half a lease after the last
// extension, an unanswered attempt leaves half a lease: retrying every eighth gives three more
// tries before the claim lapses.
Millis retry_delay(Millis lease) {
  return std::max(lease / 8, Millis{1});
}

}  // namespace

DeliveryHeartbeat::DeliveryHeartbeat(event::EventLoop& loop, QueuePort& queue,
                                     ListenerObserver& observer, const Message& message)
    : loop_(loop),
      queue_(queue),
      observer_(observer),
      message_(message),
      wake_(loop),
      finished_(loop) {}

void DeliveryHeartbeat::start(std::function<Task<ClaimExtension>()> extend_claim, Millis lease) {
  // A start() without stop() ends the old heartbeat: its generation is gone.
  ++generation_;
  running_ = true;
  wake_.notify_all();
  ++beating_;
  spawn(beat(std::move(extend_claim), lease, generation_), [this](std::exception_ptr error) {
    // A tick that threw stops its heartbeat; the claim then lapses like a lost one.
    report_failure("heartbeat", &observer_, error);
    --beating_;
    finished_.notify_all();
  });
}

Task<void> DeliveryHeartbeat::stop() {
  if (!std::exchange(running_, false)) co_return;
  ++generation_;
  wake_.notify_all();
  while (beating_ > 0) co_await finished_.wait();
}

Task<void> DeliveryHeartbeat::beat(std::function<Task<ClaimExtension>()> extend_claim, Millis lease,
                                   std::uint64_t generation) {
  std::optional<Millis> next = lease / 2;
  while (next) {
    const SteadyInstant due = loop_.now() + *next;
    // Woken early only by a stop (or a newer start); the tick is due when the deadline passes.
    while (generation == generation_ && loop_.now() < due) co_await wake_.wait(due);
    if (generation != generation_) co_return;
    next = co_await tick(extend_claim, lease);
    if (generation != generation_) co_return;
  }
}

Task<std::optional<Millis>> DeliveryHeartbeat::tick(
    const std::function<Task<ClaimExtension>()>& extend_claim, Millis lease) {
  const ClaimExtension extension = co_await extend_claim();
  observer_.on_heartbeat(message_.message_id, extension);
  switch (extension) {
    case ClaimExtension::Lost:
      co_return std::nullopt;
    case ClaimExtension::Unanswered:
      // Whether the claim outlives its lease is unknown, so the message's visibility is not
      // stretched past it either: a lapsed claim must be re-deliverable.
      co_return retry_delay(lease);
    case ClaimExtension::Extended:
      break;
  }
  // Sent directly, not through the ack batcher: it must not be reordered after the final delete
  // or visibility change of the same delivery, and stop() (which precedes those) waits for it.
  const VisibilityEntry entry{.message_id = message_.message_id,
                              .receipt_handle = message_.receipt_handle,
                              .timeout = visibility_seconds(lease)};
  auto reply = co_await queue_.change_visibility_batch(std::span<const VisibilityEntry>(&entry, 1));
  if (!reply) {
    observer_.on_heartbeat_visibility_failed(entry.message_id, reply.error());
  } else if (reply->empty() || !reply->front()) {
    observer_.on_heartbeat_visibility_failed(
        entry.message_id,
        reply->empty() ? Error{.code = "MissingBatchEntry"} : reply->front().error());
  }
  co_return lease / 2;  // a missed visibility change is retried at the next tick
}

}  // namespace ic::consumer
