#include "app/telemetry/listener_telemetry.hpp"

namespace ic::app {

ListenerTelemetry::ListenerTelemetry(observability::Logger& log, observability::MetricsRegistry& m,
                                     const Clock& clock)
    : log_(log),
      received_(m.counter("ic_messages_received_total", "Messages received from the queue")),
      receive_errors_(m.counter("ic_receive_errors_total", "Failed receive calls", {"code"})),
      dispositions_(m.counter("ic_dispositions_total", "Dispositions by kind and reason",
                              {"kind", "reason"})),
      dlq_forwards_(m.counter("ic_dlq_forwards_total", "Messages dead-lettered", {"reason"})),
      dlq_quarantined_(m.counter("ic_dlq_quarantined_total",
                                 "Dead letters whose reason only the quarantine record keeps",
                                 {"reason"})),
      dlq_attributes_dropped_(m.counter("ic_dlq_attributes_dropped_total",
                                        "Producer attributes left out of DLQ copies")),
      batch_failures_(
          m.counter("ic_batch_entry_failures_total", "Failed batch entries", {"action", "final"})),
      heartbeats_(m.counter("ic_heartbeats_total", "Lease heartbeats", {"extended"})),
      in_flight_(m.gauge("ic_in_flight_messages", "Handlers running now")),
      processing_(m.histogram("ic_processing_seconds", "Time from handler start to disposition",
                              observability::kDefaultSecondsBuckets)),
      thread_exceptions_(m.counter("ic_thread_exceptions_total",
                                   "Exceptions that reached a thread boundary", {"thread"})),
      receive_warnings_(observability::kRepeatWindow, clock),
      quarantine_warnings_(observability::kRepeatWindow, clock) {}

void ListenerTelemetry::on_received(std::size_t count) {
  if (readiness_) readiness_->succeeded("receive");
  received_.with({}).inc(count);
}

void ListenerTelemetry::on_receive_error(const Error& error, Millis delay) {
  receive_errors_.with({error.code}).inc();
  if (const auto held = receive_warnings_.admit(error.code)) {
    log_.warn("receive failed; backing off", {{"code", error.code},
                                              {"class", to_string(error.error_class)},
                                              {"detail", error.message},
                                              {"ambiguous", error.ambiguous},
                                              {"backoffMs", delay.count()},
                                              {"suppressed", *held}});
  }
  if (readiness_) readiness_->failed("receive", error);
}

void ListenerTelemetry::on_disposition(consumer::DispositionKind kind, std::string_view reason,
                                       Millis processing_time) {
  dispositions_.with({consumer::to_string(kind), reason}).inc();
  if (kind == consumer::DispositionKind::DeadLetter) dlq_forwards_.with({reason}).inc();
  processing_.with({}).observe(std::chrono::duration<double>(processing_time).count());
}

void ListenerTelemetry::on_dead_letter(const consumer::Message& message,
                                       const consumer::DeadLetter& dead) {
  log_.warn("dead-lettering", {{"messageId", message.message_id},
                               {"chargeId", dead.key},
                               {"failureReason", dead.reason},
                               {"failureDetail", dead.detail},
                               {"receiveCount", message.receive_count}});
}

void ListenerTelemetry::on_handler_error(std::string_view message_id, std::string_view what) {
  log_.error("handler failed; the message returns after its visibility timeout",
             {{"messageId", message_id}, {"detail", what}});
}

void ListenerTelemetry::on_dlq_send_failed(std::string_view message_id, const Error& error) {
  log_.error("DLQ forward failed; message kept for retry", {{"messageId", message_id},
                                                            {"code", error.code},
                                                            {"detail", error.message},
                                                            {"ambiguous", error.ambiguous}});
}

void ListenerTelemetry::on_dlq_copy_refused(std::string_view message_id, std::string_view next,
                                            const Error& error) {
  log_.warn(
      "DLQ refused the copy; sending a smaller one",
      {{"messageId", message_id}, {"next", next}, {"code", error.code}, {"detail", error.message}});
}

void ListenerTelemetry::on_quarantined(const consumer::Message& message,
                                       const consumer::QuarantineRecord& record) {
  dlq_quarantined_.with({record.failure_reason}).inc();
  if (const auto held = quarantine_warnings_.admit(record.failure_reason)) {
    log_.warn("no DLQ copy can carry the reason; quarantined it, sending the body alone",
              {{"messageId", message.message_id},
               {"reason", record.failure_reason},
               {"bodySha256", record.body_sha256},
               {"bodyBytes", message.body.size()},
               {"suppressed", *held}});
  }
}

void ListenerTelemetry::on_dlq_attributes_dropped(std::string_view message_id,
                                                  std::span<const std::string> names) {
  dlq_attributes_dropped_.with({}).inc(names.size());
  std::string list;
  for (const auto& name : names) list.append(list.empty() ? "" : ",").append(name);
  log_.warn("producer attributes left out of the DLQ copy",
            {{"messageId", message_id}, {"count", names.size()}, {"attributes", list}});
}

void ListenerTelemetry::on_batch_entry_failed(consumer::BatchAction action,
                                              std::string_view message_id, const Error& error,
                                              bool final) {
  batch_failures_.with({consumer::to_string(action), final ? "true" : "false"}).inc();
  log_.log(final ? observability::LogLevel::Error : observability::LogLevel::Warn,
           "batch entry failed",
           {{"messageId", message_id},
            {"action", consumer::to_string(action)},
            {"code", error.code},
            {"detail", error.message},
            {"ambiguous", error.ambiguous},
            {"final", final}});
}

void ListenerTelemetry::on_heartbeat(std::string_view message_id,
                                     consumer::ClaimExtension extension) {
  heartbeats_.with({consumer::to_string(extension)}).inc();
  if (extension == consumer::ClaimExtension::Lost) {
    log_.warn("heartbeat found the claim gone", {{"messageId", message_id}});
  } else if (extension == consumer::ClaimExtension::Unanswered) {
    // The store's own failure is logged where it happened; this says the claim is at risk.
    log_.warn("heartbeat could not extend the claim; retrying", {{"messageId", message_id}});
  }
}

void ListenerTelemetry::on_heartbeat_visibility_failed(std::string_view message_id,
                                                       const Error& error) {
  log_.warn("heartbeat could not extend visibility", {{"messageId", message_id},
                                                      {"code", error.code},
                                                      {"detail", error.message},
                                                      {"ambiguous", error.ambiguous}});
}

void ListenerTelemetry::on_in_flight(std::size_t count) {
  in_flight_.with({}).set(static_cast<double>(count));
}

void ListenerTelemetry::on_returned_unstarted(std::size_t count) {
  log_.info("returned unstarted messages to the queue", {{"count", count}});
}

void ListenerTelemetry::on_grace_exceeded(std::size_t still_running) {
  log_.warn("shutdown grace exceeded; still waiting for handlers",
            {{"stillRunning", still_running}});
}

void ListenerTelemetry::on_thread_exception(std::string_view thread,
                                            std::string_view what) noexcept {
  try {
    thread_exceptions_.with({thread}).inc();
    log_.error("exception reached a thread boundary", {{"thread", thread}, {"detail", what}});
  } catch (...) {  // noexcept: a report that fails (out of memory) must not terminate
  }
}

}  // namespace ic::app
