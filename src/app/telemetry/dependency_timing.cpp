#include "app/telemetry/dependency_timing.hpp"

namespace ic::app {
namespace {

// Awaits `call` and observes how long it took under (dependency, operation).
template <class T>
Task<T> timed(DependencyTimings& timings, std::string_view dependency, std::string_view operation,
              Task<T> call) {
  const auto start = std::chrono::steady_clock::now();
  T result = co_await std::move(call);
  timings.observe(dependency, operation, std::chrono::steady_clock::now() - start);
  co_return result;
}

}  // namespace

DependencyTimings::DependencyTimings(observability::MetricsRegistry& metrics)
    : seconds_(metrics.histogram("ic_dependency_seconds",
                                 "Duration of each call to a dependency, its retries included",
                                 kDependencyBuckets, {"dependency", "operation"})) {}

void DependencyTimings::observe(std::string_view dependency, std::string_view operation,
                                std::chrono::steady_clock::duration took) {
  seconds_.with({dependency, operation}).observe(std::chrono::duration<double>(took).count());
}

Task<idempotency::ClaimReply> TimedStore::claim(const idempotency::ClaimRequest& request) {
  return timed(timings_, "store", "claim", inner_.claim(request));
}

Task<idempotency::WriteReply> TimedStore::complete(std::string_view key, std::string_view token,
                                                   const idempotency::Completion& completion,
                                                   Instant now) {
  return timed(timings_, "store", "complete", inner_.complete(key, token, completion, now));
}

Task<idempotency::WriteReply> TimedStore::fail(std::string_view key, std::string_view token,
                                               const idempotency::Failure& failure, Instant now) {
  return timed(timings_, "store", "fail", inner_.fail(key, token, failure, now));
}

Task<idempotency::WriteReply> TimedStore::extend(std::string_view key, std::string_view token,
                                                 Instant new_lease_until) {
  return timed(timings_, "store", "extend", inner_.extend(key, token, new_lease_until));
}

Task<idempotency::WriteReply> TimedStore::release(std::string_view key, std::string_view token) {
  return timed(timings_, "store", "release", inner_.release(key, token));
}

Task<idempotency::ReadReply> TimedStore::get(std::string_view key) {
  return timed(timings_, "store", "get", inner_.get(key));
}

Task<domain::DebitResult> TimedDebit::debit(const domain::Charge& charge,
                                            std::string_view idempotency_key) {
  return timed(timings_, "bank", "debit", inner_.debit(charge, idempotency_key));
}

Task<domain::NotificationResult> TimedNotification::notify(const domain::Charge& charge,
                                                           std::string_view debit_ref,
                                                           std::string_view idempotency_key) {
  return timed(timings_, "notification", "notify",
               inner_.notify(charge, debit_ref, idempotency_key));
}

Task<consumer::QueuePort::Received> TimedQueue::receive(int max_messages, std::chrono::seconds wait,
                                                        std::stop_token stop) {
  return timed(timings_, "queue", "receive", inner_.receive(max_messages, wait, std::move(stop)));
}

Task<consumer::QueuePort::BatchReply> TimedQueue::delete_batch(
    std::span<const consumer::DeleteEntry> entries) {
  return timed(timings_, "queue", "delete", inner_.delete_batch(entries));
}

Task<consumer::QueuePort::BatchReply> TimedQueue::change_visibility_batch(
    std::span<const consumer::VisibilityEntry> entries) {
  return timed(timings_, "queue", "change_visibility", inner_.change_visibility_batch(entries));
}

Task<std::expected<void, Error>> TimedQueue::send_to_dlq(
    std::string_view body, const consumer::MessageAttributes& attributes) {
  return timed(timings_, "queue", "send_to_dlq", inner_.send_to_dlq(body, attributes));
}

}  // namespace ic::app
