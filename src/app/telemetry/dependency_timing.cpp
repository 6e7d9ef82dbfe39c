#include "app/telemetry/dependency_timing.hpp"

namespace ic::app {
namespace {

// Runs `call` and observes how long it took under (dependency, operation).
template <class Call>
auto timed(DependencyTimings& timings, std::string_view dependency, std::string_view operation,
           Call&& call) {
  const auto start = std::chrono::steady_clock::now();
  auto result = call();
  timings.observe(dependency, operation, std::chrono::steady_clock::now() - start);
  return result;
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

std::expected<idempotency::ClaimResult, Error> TimedStore::claim(
    const idempotency::ClaimRequest& request) {
  return timed(timings_, "store", "claim", [&] { return inner_.claim(request); });
}

std::expected<idempotency::WriteOutcome, Error> TimedStore::complete(
    std::string_view key, std::string_view token, const idempotency::Completion& completion,
    Instant now) {
  return timed(timings_, "store", "complete",
               [&] { return inner_.complete(key, token, completion, now); });
}

std::expected<idempotency::WriteOutcome, Error> TimedStore::fail(
    std::string_view key, std::string_view token, const idempotency::Failure& failure,
    Instant now) {
  return timed(timings_, "store", "fail", [&] { return inner_.fail(key, token, failure, now); });
}

std::expected<idempotency::WriteOutcome, Error> TimedStore::extend(std::string_view key,
                                                                   std::string_view token,
                                                                   Instant new_lease_until) {
  return timed(timings_, "store", "extend",
               [&] { return inner_.extend(key, token, new_lease_until); });
}

std::expected<idempotency::WriteOutcome, Error> TimedStore::release(std::string_view key,
                                                                    std::string_view token) {
  return timed(timings_, "store", "release", [&] { return inner_.release(key, token); });
}

std::expected<std::optional<idempotency::ClaimRecord>, Error> TimedStore::get(
    std::string_view key) {
  return timed(timings_, "store", "get", [&] { return inner_.get(key); });
}

domain::DebitResult TimedDebit::debit(const domain::Charge& charge,
                                      std::string_view idempotency_key) {
  return timed(timings_, "bank", "debit", [&] { return inner_.debit(charge, idempotency_key); });
}

domain::NotificationResult TimedNotification::notify(const domain::Charge& charge,
                                                     std::string_view debit_ref,
                                                     std::string_view idempotency_key) {
  return timed(timings_, "notification", "notify",
               [&] { return inner_.notify(charge, debit_ref, idempotency_key); });
}

std::expected<std::vector<consumer::Message>, Error> TimedQueue::receive(
    int max_messages, std::chrono::seconds wait) {
  return timed(timings_, "queue", "receive", [&] { return inner_.receive(max_messages, wait); });
}

std::expected<std::vector<consumer::Message>, Error> TimedQueue::receive_stoppable(
    int max_messages, std::chrono::seconds wait, std::stop_token stop) {
  return timed(timings_, "queue", "receive",
               [&] { return inner_.receive_stoppable(max_messages, wait, stop); });
}

std::expected<consumer::BatchResult, Error> TimedQueue::delete_batch(
    std::span<const consumer::DeleteEntry> entries) {
  return timed(timings_, "queue", "delete", [&] { return inner_.delete_batch(entries); });
}

std::expected<consumer::BatchResult, Error> TimedQueue::change_visibility_batch(
    std::span<const consumer::VisibilityEntry> entries) {
  return timed(timings_, "queue", "change_visibility",
               [&] { return inner_.change_visibility_batch(entries); });
}

std::expected<void, Error> TimedQueue::send_to_dlq(std::string_view body,
                                                   const consumer::MessageAttributes& attributes) {
  return timed(timings_, "queue", "send_to_dlq",
               [&] { return inner_.send_to_dlq(body, attributes); });
}

}  // namespace ic::app
