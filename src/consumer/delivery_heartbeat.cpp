#include "consumer/delivery_heartbeat.hpp"

#include <algorithm>

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

DeliveryHeartbeat::DeliveryHeartbeat(HeartbeatScheduler& scheduler, QueuePort& queue,
                                     ListenerObserver& observer, const Message& message)
    : scheduler_(scheduler), queue_(queue), observer_(observer), message_(message) {}

DeliveryHeartbeat::~DeliveryHeartbeat() {
  stop();
}

void DeliveryHeartbeat::start(std::function<ClaimExtension()> extend_claim, Millis lease) {
  stop();
  // The visibility change is sent directly, not through the ack batcher: it must not be
  // reordered after the final delete or visibility change of the same delivery, and stop()
  // (which precedes those) waits for this tick to finish.
  auto tick =
      [&queue = queue_, &observer = observer_, extend = std::move(extend_claim), lease,
       entry = VisibilityEntry{.message_id = message_.message_id,
                               .receipt_handle = message_.receipt_handle,
                               .timeout = visibility_seconds(lease)}]() -> std::optional<Millis> {
    const ClaimExtension extension = extend();
    observer.on_heartbeat(entry.message_id, extension);
    switch (extension) {
      case ClaimExtension::Lost:
        return std::nullopt;
      case ClaimExtension::Unanswered:
        // Whether the claim outlives its lease is unknown, so the message's visibility is
        // not stretched past it either: a lapsed claim must be re-deliverable.
        return retry_delay(lease);
      case ClaimExtension::Extended:
        break;
    }
    auto reply = queue.change_visibility_batch(std::span<const VisibilityEntry>(&entry, 1));
    if (!reply) {
      observer.on_heartbeat_visibility_failed(entry.message_id, reply.error());
    } else if (reply->empty() || !reply->front()) {
      observer.on_heartbeat_visibility_failed(
          entry.message_id,
          reply->empty() ? Error{.code = "MissingBatchEntry"} : reply->front().error());
    }
    return lease / 2;  // a missed visibility change is retried at the next tick
  };
  // The scheduler survives a throwing tick but cannot say so; the guard reports it.
  scheduled_ = scheduler_.schedule(lease / 2, [&observer = observer_, tick = std::move(tick)] {
    std::optional<Millis> next;
    run_guarded("heartbeat", &observer, [&] { next = tick(); });
    return next;
  });
}

void DeliveryHeartbeat::stop() {
  if (!scheduled_) return;
  scheduler_.cancel(*scheduled_);
  scheduled_.reset();
}

}  // namespace ic::consumer
