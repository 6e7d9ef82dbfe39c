// Turns what the service, the listener container and the AWS clients report into JSON log lines
// and Prometheus metrics. The one place that knows metric names.
#pragma once

#include <string_view>

#include "application/charge_observer.hpp"
#include "aws/json_client.hpp"
#include "consumer/listener_observer.hpp"
#include "observability/json_log.hpp"
#include "observability/metrics.hpp"

namespace ic::app {

// Names the message being handled on this thread, so every log line of its handling carries
// the messageId without threading it through the domain.
class MessageScope {
 public:
  explicit MessageScope(std::string_view message_id);
  ~MessageScope();
  MessageScope(const MessageScope&) = delete;
  MessageScope& operator=(const MessageScope&) = delete;
  [[nodiscard]] static std::string_view current();
};

// Thread-safety: every hook is called concurrently from workers, receivers and timers; the
// logger and the metric series are thread-safe. Ownership: borrows logger and registry.
class Telemetry final : public application::ChargeObserver,
                        public consumer::ListenerObserver,
                        public aws::JsonClientObserver {
 public:
  Telemetry(obs::Logger& log, obs::MetricsRegistry& metrics);

  // ChargeObserver
  void claim_decided(const charge::Charge& c, const idem::ClaimResult& result) override;
  void debit_finished(const charge::Charge& c, const charge::DebitResult& result) override;
  void notification_finished(const charge::Charge& c,
                             const charge::NotificationResult& result) override;
  void store_failed(const charge::Charge& c, idem::StoreOperation operation,
                    const Error& error) override;
  void fenced(const charge::Charge& c, idem::StoreOperation operation) override;
  void recorded(const charge::Charge& c, idem::StoreOperation operation) override;

  // ListenerObserver
  void on_received(std::size_t count) override;
  void on_receive_error(const Error& error, Millis delay) override;
  void on_disposition(consumer::DispositionKind kind, std::string_view reason,
                      Millis processing_time) override;
  void on_handler_error(std::string_view message_id, std::string_view what) override;
  void on_dlq_send_failed(std::string_view message_id, const Error& error) override;
  void on_dlq_copy_refused(std::string_view message_id, std::string_view next,
                           const Error& error) override;
  void on_dlq_attributes_dropped(std::string_view message_id,
                                 std::span<const std::string> names) override;
  void on_batch_entry_failed(consumer::BatchAction action, std::string_view message_id,
                             const Error& error, bool final) override;
  void on_heartbeat(std::string_view message_id, bool extended) override;
  void on_heartbeat_visibility_failed(std::string_view message_id, const Error& error) override;
  void on_in_flight(std::size_t count) override;
  void on_returned_unstarted(std::size_t count) override;
  void on_grace_exceeded(std::size_t still_running) override;

  // JsonClientObserver
  void on_attempt(const aws::AttemptEvent& event) override;

  // Set once the first receive succeeds: readiness of the queue side.
  [[nodiscard]] bool polling() const { return polling_.load(); }
  // Readiness of the table: the start-up probe, then the outcome of every claim.
  void table_answered(bool ok) { table_reachable_ = ok; }
  [[nodiscard]] bool table_reachable() const { return table_reachable_.load(); }

 private:
  obs::Logger& log_;
  obs::CounterFamily& received_;
  obs::CounterFamily& receive_errors_;
  obs::CounterFamily& claim_outcomes_;
  obs::CounterFamily& dispositions_;
  obs::CounterFamily& dlq_forwards_;
  obs::CounterFamily& dlq_attributes_dropped_;
  obs::CounterFamily& debits_;
  obs::CounterFamily& notifications_;
  obs::CounterFamily& fenced_;
  obs::CounterFamily& store_errors_;
  obs::CounterFamily& batch_failures_;
  obs::CounterFamily& heartbeats_;
  obs::CounterFamily& aws_requests_;
  obs::CounterFamily& aws_retries_;
  obs::GaugeFamily& in_flight_;
  obs::HistogramFamily& processing_;
  std::atomic<bool> polling_{false};
  std::atomic<bool> table_reachable_{false};
};

}  // namespace ic::app
