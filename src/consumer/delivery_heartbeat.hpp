// The LeaseHeartbeat the container hands to a handler for one delivery: at every half lease it
// extends the claim and, while the claim is still held, the message's visibility by one lease;
// an unanswered extension is retried after an eighth of a lease.
#pragma once

#include <optional>

#include "consumer/heartbeat_scheduler.hpp"
#include "consumer/lease_heartbeat.hpp"
#include "consumer/listener_observer.hpp"
#include "consumer/queue_port.hpp"

namespace ic::consumer {

// Thread-safety: start/stop are called from the handler's thread only (LeaseHeartbeat's
// contract); the ticks run on the scheduler's thread. stop() waits for a running tick, so
// `extend_claim` may refer to the handler's stack. Ownership: the scheduler, queue and
// observer must outlive this object; the destructor stops the heartbeat.
class DeliveryHeartbeat final : public consumer::LeaseHeartbeat {
 public:
  DeliveryHeartbeat(HeartbeatScheduler& scheduler, QueuePort& queue, ListenerObserver& observer,
                    const Message& message);
  ~DeliveryHeartbeat() override;
  DeliveryHeartbeat(const DeliveryHeartbeat&) = delete;
  DeliveryHeartbeat& operator=(const DeliveryHeartbeat&) = delete;

  void start(std::function<ClaimExtension()> extend_claim, Millis lease) override;
  void stop() override;

 private:
  HeartbeatScheduler& scheduler_;
  QueuePort& queue_;
  ListenerObserver& observer_;
  const Message& message_;
  std::optional<HeartbeatScheduler::Id> scheduled_;
};

}  // namespace ic::consumer
