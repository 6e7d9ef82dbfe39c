// The LeaseHeartbeat the container hands to a handler for one delivery: at every half lease it
// extends the claim and, while the claim is still held, the message's visibility by one lease;
// an unanswered extension is retried after an eighth of a lease. Each heartbeat is a task on
// the delivery's loop, asleep on a timer between ticks.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>

#include "consumer/lease_heartbeat.hpp"
#include "consumer/listener_observer.hpp"
#include "consumer/queue_port.hpp"
#include "event/wait_queue.hpp"

namespace ic::consumer {

// Thread-safety: the loop's thread only (LeaseHeartbeat's contract). Ownership: the loop,
// queue, observer and message must outlive this object; it must not be destroyed while its
// heartbeat runs, so its owner awaits stop() first.
class DeliveryHeartbeat final : public consumer::LeaseHeartbeat {
 public:
  DeliveryHeartbeat(event::EventLoop& loop, QueuePort& queue, ListenerObserver& observer,
                    const Message& message);
  DeliveryHeartbeat(const DeliveryHeartbeat&) = delete;
  DeliveryHeartbeat& operator=(const DeliveryHeartbeat&) = delete;

  void start(std::function<Task<ClaimExtension>()> extend_claim, Millis lease) override;
  Task<void> stop() override;

 private:
  Task<void> beat(std::function<Task<ClaimExtension>()> extend_claim, Millis lease,
                  std::uint64_t generation);
  // One tick; the delay until the next, or nullopt once the claim is lost.
  Task<std::optional<Millis>> tick(const std::function<Task<ClaimExtension>()>& extend_claim,
                                   Millis lease);

  event::EventLoop& loop_;
  QueuePort& queue_;
  ListenerObserver& observer_;
  const Message& message_;
  // Each start() begins a generation; a heartbeat whose generation is no longer current stops.
  // (A flag and a notify, not a std::stop_source: that costs an allocation and a futex wake per
  // delivery.)
  std::uint64_t generation_ = 0;
  bool running_ = false;       // the current generation's heartbeat was started and not stopped
  int beating_ = 0;            // heartbeat tasks not finished yet
  event::WaitQueue wake_;      // heartbeats sleep here until their next tick or a stop
  event::WaitQueue finished_;  // stop() waits here for the last heartbeat task to end
};

}  // namespace ic::consumer
