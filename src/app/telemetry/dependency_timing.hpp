// Per-dependency latency (issue 24): how long each call of the consumer to the table, the bank,
// the notification API and the queue takes, as ic_dependency_seconds{dependency,operation}.
// Decorators over the ports, wired in `run`, so the domain and the adapters measure nothing
// themselves and every call is timed the same way: from the port call to its return, the
// adapter's own retries included (what the effect and the lease actually pay).
//
//   DependencyTimings timings(metrics);
//   TimedStore timed_store(store, timings);     // claim, complete, fail, extend, release, get
//   TimedDebit timed_bank(bank, timings);       // debit
//   ChargeRecoveryService service(timed_store, timed_bank, ...);
//
// `receive` includes the long poll's wait (up to 20 s on an empty queue): it says how long a
// receiver waits, not how slow SQS is; the alerts read claim, debit, notify and complete.
#pragma once

#include <chrono>
#include <string_view>

#include "consumer/queue_port.hpp"
#include "domain/ports.hpp"
#include "idempotency/idempotency_store.hpp"
#include "observability/metrics.hpp"

namespace ic::app {

// Upper bounds for dependency calls: milliseconds (a DynamoDB write) to the bank's timeouts
// and a long poll.
inline const std::vector<double> kDependencyBuckets{0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                    0.5,   1,     2.5,  5,     10,   20,  30};

// Thread-safety: observe() from any thread. Ownership: borrows the registry.
class DependencyTimings {
 public:
  explicit DependencyTimings(observability::MetricsRegistry& metrics);
  void observe(std::string_view dependency, std::string_view operation,
               std::chrono::steady_clock::duration took);

 private:
  observability::HistogramFamily& seconds_;
};

// Each forwards to the wrapped port and observes the call's duration; it changes nothing else.
// Thread-safety: as the wrapped port. Ownership: borrows the port and the timings.
class TimedStore final : public idempotency::IdempotencyStore {
 public:
  TimedStore(idempotency::IdempotencyStore& inner, DependencyTimings& timings)
      : inner_(inner), timings_(timings) {}
  Task<idempotency::ClaimReply> claim(const idempotency::ClaimRequest& request) override;
  Task<idempotency::WriteReply> complete(std::string_view key, std::string_view token,
                                         const idempotency::Completion& completion,
                                         Instant now) override;
  Task<idempotency::WriteReply> fail(std::string_view key, std::string_view token,
                                     const idempotency::Failure& failure, Instant now) override;
  Task<idempotency::WriteReply> extend(std::string_view key, std::string_view token,
                                       Instant new_lease_until) override;
  Task<idempotency::WriteReply> release(std::string_view key, std::string_view token) override;
  Task<idempotency::ReadReply> get(std::string_view key) override;

 private:
  idempotency::IdempotencyStore& inner_;
  DependencyTimings& timings_;
};

class TimedDebit final : public domain::AccountDebitPort {
 public:
  TimedDebit(domain::AccountDebitPort& inner, DependencyTimings& timings)
      : inner_(inner), timings_(timings) {}
  Task<domain::DebitResult> debit(const domain::Charge& charge,
                                  std::string_view idempotency_key) override;

 private:
  domain::AccountDebitPort& inner_;
  DependencyTimings& timings_;
};

class TimedNotification final : public domain::NotificationPort {
 public:
  TimedNotification(domain::NotificationPort& inner, DependencyTimings& timings)
      : inner_(inner), timings_(timings) {}
  Task<domain::NotificationResult> notify(const domain::Charge& charge, std::string_view debit_ref,
                                          std::string_view idempotency_key) override;

 private:
  domain::NotificationPort& inner_;
  DependencyTimings& timings_;
};

class TimedQueue final : public consumer::QueuePort {
 public:
  TimedQueue(consumer::QueuePort& inner, DependencyTimings& timings)
      : inner_(inner), timings_(timings) {}
  Task<Received> receive(int max_messages, std::chrono::seconds wait,
                         std::stop_token stop) override;
  Task<BatchReply> delete_batch(std::span<const consumer::DeleteEntry> entries) override;
  Task<BatchReply> change_visibility_batch(
      std::span<const consumer::VisibilityEntry> entries) override;
  Task<std::expected<void, Error>> send_to_dlq(
      std::string_view body, const consumer::MessageAttributes& attributes) override;

 private:
  consumer::QueuePort& inner_;
  DependencyTimings& timings_;
};

}  // namespace ic::app
