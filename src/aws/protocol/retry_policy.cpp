#include "aws/protocol/retry_policy.hpp"

#include <algorithm>
#include <array>
#include <string_view>

#include "core/backoff.hpp"

namespace ic::aws {
namespace {

constexpr std::array<std::string_view, 14> kThrottlingCodes = {
    "Throttling",
    "ThrottlingException",
    "ThrottledException",
    "RequestThrottledException",
    "TooManyRequestsException",
    "ProvisionedThroughputExceededException",
    "TransactionInProgressException",
    "RequestLimitExceeded",
    "BandwidthLimitExceeded",
    "LimitExceededException",
    "RequestThrottled",
    "SlowDown",
    "PriorRequestNotComplete",
    "EC2ThrottledException",
};

constexpr std::array<std::string_view, 5> kTransientCodes = {
    "RequestTimeout",
    "RequestTimeoutException",
    "PriorRequestNotComplete",
    "InternalError",
    // DynamoDB global tables: a concurrent write in another Region; botocore models it on
    // UpdateItem as retryable (not throttling).
    "ReplicatedWriteConflictException",
};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& set, std::string_view code) {
  return std::find(set.begin(), set.end(), code) != set.end();
}

}  // namespace

bool is_throttling_code(std::string_view code) {
  return contains(kThrottlingCodes, code);
}
bool is_transient_code(std::string_view code) {
  return contains(kTransientCodes, code);
}
bool is_timeout_code(std::string_view code) {
  return code == "TimeoutBeforeSend" || code == "TimeoutAfterSend";
}

RetryPolicy::RetryPolicy(RetryConfig config, Random& random)
    : config_(config), random_(random), tokens_(config.initial_tokens) {}

std::chrono::milliseconds RetryPolicy::backoff(const Error& error, int attempt) const {
  const auto base = error.error_class == ErrorClass::Throttling ? config_.throttling_base
                                                                : config_.transient_base;
  return backoff_delay(attempt - 1, base, config_.max_backoff, Jitter::Full, random_);
}

std::optional<std::chrono::milliseconds> RetryPolicy::on_failure(const Error& error, int attempt,
                                                                 RetryAttempt& state) {
  if (error.error_class == ErrorClass::Permanent || attempt >= config_.max_attempts) {
    return std::nullopt;
  }
  const int cost = is_timeout_code(error.code) ? config_.timeout_retry_cost : config_.retry_cost;
  {
    MutexLock lock(mutex_);
    if (tokens_ < cost) return std::nullopt;
    tokens_ -= cost;
  }
  state.last_cost = cost;
  return backoff(error, attempt);
}

void RetryPolicy::on_success(const RetryAttempt& state) {
  const int refund = state.last_cost > 0 ? state.last_cost : config_.no_retry_increment;
  MutexLock lock(mutex_);
  tokens_ = std::min(config_.initial_tokens, tokens_ + refund);
}

int RetryPolicy::tokens() const {
  MutexLock lock(mutex_);
  return tokens_;
}

}  // namespace ic::aws
