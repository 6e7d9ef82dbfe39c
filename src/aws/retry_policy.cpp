#include "aws/retry_policy.hpp"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <random>
#include <string_view>

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

constexpr std::array<std::string_view, 4> kTransientCodes = {
    "RequestTimeout",
    "RequestTimeoutException",
    "PriorRequestNotComplete",
    "InternalError",
};

template <std::size_t N>
bool contains(const std::array<std::string_view, N>& set, std::string_view code) {
  return std::find(set.begin(), set.end(), code) != set.end();
}

}  // namespace

double random_unit_interval() {
  thread_local std::mt19937_64 engine{std::random_device{}()};
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

bool is_throttling_code(std::string_view code) {
  return contains(kThrottlingCodes, code);
}
bool is_transient_code(std::string_view code) {
  return contains(kTransientCodes, code);
}
bool is_timeout_code(std::string_view code) {
  return code == "TimeoutBeforeSend" || code == "TimeoutAfterSend";
}

RetryPolicy::RetryPolicy(RetryConfig config, RandomUnit random)
    : config_(config), random_(std::move(random)), tokens_(config.initial_tokens) {}

std::chrono::milliseconds RetryPolicy::backoff(const AwsError& error, int attempt) const {
  const auto base = error.error_class == ErrorClass::Throttling ? config_.throttling_base
                                                                : config_.transient_base;
  // base * 2^(attempt-1), computed in double so a large attempt number cannot overflow.
  const double exponential =
      static_cast<double>(base.count()) * std::exp2(std::max(0, attempt - 1));
  const double ceiling = std::min(exponential, static_cast<double>(config_.max_backoff.count()));
  // A faulty RandomUnit (NaN, out of range) must not push the delay out of [0, cap].
  double jitter = random_();
  if (!(jitter > 0.0)) jitter = 0.0;
  if (jitter > 1.0) jitter = 1.0;
  return std::chrono::milliseconds(static_cast<std::int64_t>(jitter * ceiling));
}

std::optional<std::chrono::milliseconds> RetryPolicy::on_failure(const AwsError& error, int attempt,
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
