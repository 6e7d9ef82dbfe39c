// Turns what the service, the listener container and the AWS clients report into JSON log lines
// and Prometheus metrics. The one place that knows metric names.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "adapters/sqs/queue_health.hpp"
#include "application/charge_observer.hpp"
#include "aws/json_client.hpp"
#include "consumer/listener_observer.hpp"
#include "observability/json_log.hpp"
#include "observability/metrics.hpp"
#include "observability/readiness.hpp"

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
// logger and the metric series are thread-safe. Ownership: borrows logger and registry, and
// the readiness it feeds.
class Telemetry final : public application::ChargeObserver,
                        public consumer::ListenerObserver,
                        public aws::JsonClientObserver,
                        public obs::ReadinessListener {
 public:
  Telemetry(obs::Logger& log, obs::MetricsRegistry& metrics);

  // From now on receives feed the "receive" dependency and store calls the "store" one.
  // Call before any thread reports.
  void feed(obs::Readiness& readiness) { readiness_ = &readiness; }

  // ChargeObserver
  void claim_decided(const charge::Charge& c, const idem::ClaimResult& result) override;
  void debit_finished(const charge::Charge& c, const charge::DebitResult& result) override;
  void notification_finished(const charge::Charge& c,
                             const charge::NotificationResult& result) override;
  void store_failed(const charge::Charge& c, idem::StoreOperation operation,
                    const Error& error) override;
  void fenced(const charge::Charge& c, idem::StoreOperation operation,
              std::string_view claim_token) override;
  void recorded(const charge::Charge& c, idem::StoreOperation operation,
                std::string_view claim_token) override;

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
  void on_heartbeat(std::string_view message_id, consumer::ClaimExtension extension) override;
  void on_heartbeat_visibility_failed(std::string_view message_id, const Error& error) override;
  void on_in_flight(std::size_t count) override;
  void on_returned_unstarted(std::size_t count) override;
  void on_grace_exceeded(std::size_t still_running) override;

  // ThreadFailureObserver (through ListenerObserver): every thread boundary reports here.
  void on_thread_exception(std::string_view thread, std::string_view what) noexcept override;

  // JsonClientObserver
  void on_attempt(const aws::AttemptEvent& event) override;

  // ReadinessListener
  void on_readiness(std::span<const obs::DependencyStatus> dependencies, bool ready) override;

  // What the prober read: `queue` is the label value, "source" or "dlq".
  void queue_depth(std::string_view queue, const sqs::QueueDepth& depth);
  // A source-queue setting that undermines the claim protocol; logged once at start-up.
  void queue_setting_warning(std::string_view problem, std::chrono::seconds lease,
                             const sqs::QueueSettings& settings);

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
  obs::CounterFamily& thread_exceptions_;
  obs::GaugeFamily& ready_;
  obs::GaugeFamily& dependency_up_;
  obs::GaugeFamily& queue_messages_;
  obs::Readiness* readiness_ = nullptr;
  // The last verdict logged per dependency (empty: up, else the code it is down with).
  // on_readiness calls are serialised by the Readiness's lock, so these need no lock of their own.
  std::map<std::string, std::string, std::less<>> reported_;
  std::optional<bool> reported_ready_;
};

}  // namespace ic::app
