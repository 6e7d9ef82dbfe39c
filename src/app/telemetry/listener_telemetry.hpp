// What the listener container reports (consumer::ListenerObserver): receives, dispositions,
// dead-letter forwards, batches, heartbeats and shutdown, as log lines and metrics; and, as
// the process's ThreadFailureObserver, every exception that reached a thread boundary.
#pragma once

#include "consumer/listener_observer.hpp"
#include "observability/json_log.hpp"
#include "observability/metrics.hpp"
#include "observability/readiness.hpp"
#include "observability/repeat_limiter.hpp"

namespace ic::app {

// Thread-safety: every hook is called concurrently from workers, receivers and timers; the
// logger and the metric series are thread-safe. Ownership: borrows logger and registry, and
// the readiness it feeds.
class ListenerTelemetry final : public consumer::ListenerObserver {
 public:
  // `clock` paces the rate-limited warnings.
  ListenerTelemetry(observability::Logger& log, observability::MetricsRegistry& metrics,
                    const Clock& clock = real_clock());

  // From now on receives feed the "receive" dependency. Call before any thread reports.
  void feed(observability::Readiness& readiness) { readiness_ = &readiness; }

  void on_received(std::size_t count) override;
  void on_receive_error(const Error& error, Millis delay) override;
  void on_disposition(consumer::DispositionKind kind, std::string_view reason,
                      Millis processing_time) override;
  void on_dead_letter(const consumer::Message& message, const consumer::DeadLetter& dead) override;
  void on_handler_error(std::string_view message_id, std::string_view what) override;
  void on_dlq_send_failed(std::string_view message_id, const Error& error) override;
  void on_dlq_copy_refused(std::string_view message_id, std::string_view next,
                           const Error& error) override;
  void on_quarantined(const consumer::Message& message,
                      const consumer::QuarantineRecord& record) override;
  void on_dlq_attributes_dropped(std::string_view message_id,
                                 std::span<const std::string> names) override;
  void on_batch_entry_failed(consumer::BatchAction action, std::string_view message_id,
                             const Error& error, bool final) override;
  void on_heartbeat(std::string_view message_id, consumer::ClaimExtension extension) override;
  void on_heartbeat_visibility_failed(std::string_view message_id, const Error& error) override;
  void on_in_flight(std::size_t count) override;
  void on_returned_unstarted(std::size_t count) override;
  void on_grace_exceeded(std::size_t still_running) override;

  // ThreadFailureObserver (through ListenerObserver): every thread boundary reports here.
  void on_thread_exception(std::string_view thread, std::string_view what) noexcept override;

 private:
  observability::Logger& log_;
  observability::CounterFamily& received_;
  observability::CounterFamily& receive_errors_;
  observability::CounterFamily& dispositions_;
  observability::CounterFamily& dlq_forwards_;
  observability::CounterFamily& dlq_quarantined_;
  observability::CounterFamily& dlq_attributes_dropped_;
  observability::CounterFamily& batch_failures_;
  observability::CounterFamily& heartbeats_;
  observability::GaugeFamily& in_flight_;
  observability::HistogramFamily& processing_;
  observability::CounterFamily& thread_exceptions_;
  observability::Readiness* readiness_ = nullptr;
  // "receive failed" repeats on every backoff while SQS is unreachable: once per window per
  // error code, with the count held back (the counter above still counts each).
  observability::RepeatLimiter receive_warnings_;
  // A flood of oversized poison (one producer bug) would log a line per message: once per
  // window per reason instead, with the count held back.
  observability::RepeatLimiter quarantine_warnings_;
};

}  // namespace ic::app
