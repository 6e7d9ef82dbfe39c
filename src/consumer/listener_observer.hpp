// Hook through which the listener container reports what it does, so the binary can log and
// export metrics (Prometheus) without the container knowing either.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>

#include "consumer/disposition.hpp"
#include "consumer/lease_heartbeat.hpp"
#include "consumer/quarantine.hpp"
#include "consumer/queue_port.hpp"
#include "core/thread_guard.hpp"
#include "core/time.hpp"

namespace ic::consumer {

enum class DispositionKind { Ack, RetryLater, DeadLetter };
enum class BatchAction { Delete, ChangeVisibility };

[[nodiscard]] std::string_view to_string(DispositionKind kind);
[[nodiscard]] std::string_view to_string(BatchAction action);
// The `extended` label of ic_heartbeats_total: "true", "false" (lost) or "unanswered".
[[nodiscard]] std::string_view to_string(ClaimExtension extension);

// Thread-safety: every method is called from the container's threads (receivers, workers,
// the ack batcher, the heartbeat timer), concurrently; implementations must be thread-safe
// and must not block for long. Ownership: arguments live only for the call.
// Every method has a no-op default so an observer overrides only what it exports.
// As a ThreadFailureObserver it hears of exceptions that reached one of the container's threads.
class ListenerObserver : public ThreadFailureObserver {
 public:
  void on_thread_exception(std::string_view /*thread*/,
                           std::string_view /*what*/) noexcept override {}

  virtual void on_received(std::size_t /*count*/) {}
  // After backing off `delay` because receive failed.
  virtual void on_receive_error(const Error& /*error*/, Millis /*delay*/) {}
  // The handler decided; `reason` is RetryLater::reason or DeadLetter::reason (empty for Ack).
  virtual void on_disposition(DispositionKind /*kind*/, std::string_view /*reason*/,
                              Millis /*processing_time*/) {}
  // After on_disposition of a DeadLetter, before the forward: the message and the decision.
  virtual void on_dead_letter(const Message& /*message*/, const DeadLetter& /*dead*/) {}
  // The handler threw: a broken invariant. The message is left alone and comes back after its
  // visibility timeout.
  virtual void on_handler_error(std::string_view /*message_id*/, std::string_view /*what*/) {}
  // Forwarding to the DLQ failed; the message is not deleted and is retried later.
  virtual void on_dlq_send_failed(std::string_view /*message_id*/, const Error& /*error*/) {}
  // SQS refused a DLQ copy for good (`error`); a smaller copy `next` is tried at once.
  virtual void on_dlq_copy_refused(std::string_view /*message_id*/, std::string_view /*next*/,
                                   const Error& /*error*/) {}
  // No copy could carry the reason, so `record` keeps it; a body-only copy is sent next.
  virtual void on_quarantined(const Message& /*message*/, const QuarantineRecord& /*record*/) {}
  // The DLQ copy that was sent left out these producer attributes (sorted names).
  virtual void on_dlq_attributes_dropped(std::string_view /*message_id*/,
                                         std::span<const std::string> /*names*/) {}
  // One entry of a batch failed. `final` is false when it will be retried once more; a final
  // failed delete means the message will be delivered again.
  virtual void on_batch_entry_failed(BatchAction /*action*/, std::string_view /*message_id*/,
                                     const Error& /*error*/, bool /*final*/) {}
  virtual void on_batch_sent(BatchAction /*action*/, std::size_t /*entries*/) {}
  // A heartbeat tick and what extend_claim found.
  virtual void on_heartbeat(std::string_view /*message_id*/, ClaimExtension /*extension*/) {}
  virtual void on_heartbeat_visibility_failed(std::string_view /*message_id*/,
                                              const Error& /*error*/) {}
  // Gauge: handlers running now. Called under the container's lock, in order.
  virtual void on_in_flight(std::size_t /*count*/) {}
  // Received but never started (shutdown): handed back with visibility 0.
  virtual void on_returned_unstarted(std::size_t /*count*/) {}
  // Shutdown: handlers still running when the grace period ended (the container keeps waiting).
  virtual void on_grace_exceeded(std::size_t /*still_running*/) {}
};

}  // namespace ic::consumer
