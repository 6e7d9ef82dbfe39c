// The standard retry mode: which errors retry, backoff bounds, and the retry quota.
#include "aws/protocol/retry_policy.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <limits>
#include <string>
#include <vector>

#include "testing/fixed_random.hpp"

namespace ic::aws {
namespace {

using std::chrono::milliseconds;
using testing::FixedRandom;

Error error_of(ErrorClass error_class, std::string code = "InternalServerError") {
  return Error{.error_class = error_class, .code = std::move(code)};
}

TEST(RetryPolicy, RetriesTransientAndThrottlingButNotPermanentErrors) {
  FixedRandom half(0.5);
  RetryPolicy policy({}, half);
  RetryAttempt state;
  EXPECT_TRUE(policy.on_failure(error_of(ErrorClass::Retryable), 1, state));
  EXPECT_TRUE(policy.on_failure(error_of(ErrorClass::Throttling, "ThrottlingException"), 1, state));
  EXPECT_FALSE(policy.on_failure(error_of(ErrorClass::Permanent, "ValidationException"), 1, state));
}

TEST(RetryPolicy, StopsAtMaxAttempts) {
  FixedRandom half(0.5);
  RetryPolicy policy({}, half);
  RetryAttempt state;
  EXPECT_TRUE(policy.on_failure(error_of(ErrorClass::Retryable), 2, state));
  EXPECT_FALSE(policy.on_failure(error_of(ErrorClass::Retryable), 3, state));
}

TEST(RetryPolicy, FullJitterExponentialBackoffCappedAtMaxBackoff) {
  FixedRandom random(0.999999);
  const RetryPolicy top({}, random);
  const auto error = error_of(ErrorClass::Retryable);
  EXPECT_EQ(top.backoff(error, 1), milliseconds(999));
  EXPECT_EQ(top.backoff(error, 2), milliseconds(1999));
  EXPECT_EQ(top.backoff(error, 3), milliseconds(3999));
  EXPECT_EQ(top.backoff(error, 40), milliseconds(19999));
  random.set(0.0);
  EXPECT_EQ(top.backoff(error, 3), milliseconds(0));
}

TEST(RetryPolicy, ThrottlingUsesItsOwnBase) {
  FixedRandom half(0.5);
  RetryPolicy policy({.transient_base = milliseconds(50), .throttling_base = milliseconds(1000)},
                     half);
  EXPECT_EQ(policy.backoff(error_of(ErrorClass::Retryable), 1), milliseconds(25));
  EXPECT_EQ(policy.backoff(error_of(ErrorClass::Throttling, "Throttling"), 1), milliseconds(500));
}

TEST(RetryPolicy, QuotaChargesRetriesMoreForTimeoutsAndRefundsOnSuccess) {
  FixedRandom half(0.5);
  RetryPolicy policy({}, half);
  RetryAttempt first;
  ASSERT_TRUE(policy.on_failure(error_of(ErrorClass::Retryable), 1, first));
  EXPECT_EQ(policy.tokens(), 495);
  RetryAttempt second;
  ASSERT_TRUE(policy.on_failure(error_of(ErrorClass::Retryable, "TimeoutAfterSend"), 1, second));
  EXPECT_EQ(policy.tokens(), 485);
  policy.on_success(second);  // success after a retry refunds that retry's cost
  EXPECT_EQ(policy.tokens(), 495);
  policy.on_success(RetryAttempt{});  // first-try success adds one token
  EXPECT_EQ(policy.tokens(), 496);
}

TEST(RetryPolicy, QuotaNeverExceedsItsCapacity) {
  FixedRandom half(0.5);
  RetryPolicy policy({}, half);
  policy.on_success(RetryAttempt{});
  EXPECT_EQ(policy.tokens(), 500);
}

TEST(RetryPolicy, NoRetryWhenQuotaCannotPay) {
  FixedRandom half(0.5);
  RetryPolicy policy({.initial_tokens = 12}, half);
  RetryAttempt state;
  EXPECT_TRUE(policy.on_failure(error_of(ErrorClass::Retryable, "TimeoutBeforeSend"), 1, state));
  EXPECT_EQ(policy.tokens(), 2);
  EXPECT_FALSE(policy.on_failure(error_of(ErrorClass::Retryable), 1, state));
  EXPECT_EQ(policy.tokens(), 2);
}

TEST(RetryPolicy, RecognisesTheStandardThrottlingAndTransientCodes) {
  for (auto code :
       {"Throttling", "ThrottlingException", "ThrottledException", "RequestThrottledException",
        "TooManyRequestsException", "ProvisionedThroughputExceededException",
        "TransactionInProgressException", "RequestLimitExceeded", "BandwidthLimitExceeded",
        "LimitExceededException", "RequestThrottled", "SlowDown", "PriorRequestNotComplete",
        "EC2ThrottledException"}) {
    EXPECT_TRUE(is_throttling_code(code)) << code;
  }
  for (auto code : {"RequestTimeout", "RequestTimeoutException", "PriorRequestNotComplete",
                    "InternalError", "ReplicatedWriteConflictException"}) {
    EXPECT_TRUE(is_transient_code(code)) << code;
  }
  EXPECT_FALSE(is_throttling_code("ValidationException"));
  EXPECT_FALSE(is_transient_code("ConditionalCheckFailedException"));
}

// --- properties -------------------------------------------------------------------------

const std::vector<ErrorClass> kClasses = {ErrorClass::Retryable, ErrorClass::Throttling,
                                          ErrorClass::Permanent};
const std::vector<std::string> kCodes = {"InternalServerError", "TimeoutAfterSend",
                                         "ThrottlingException", "ValidationException"};

RC_GTEST_PROP(RetryPolicyProperty, DelayAlwaysWithinZeroAndCap, ()) {
  // Even a broken random source must not push the delay out of bounds.
  const auto random =
      *rc::gen::oneOf(rc::gen::arbitrary<double>(),
                      rc::gen::element(std::numeric_limits<double>::quiet_NaN(),
                                       std::numeric_limits<double>::infinity(), -1.0, 0.999999));
  const auto attempt = *rc::gen::inRange(1, 1000);
  const auto cap = *rc::gen::inRange(1, 60000);
  const auto error_class = *rc::gen::elementOf(kClasses);
  FixedRandom source(random);
  RetryPolicy policy({.max_backoff = milliseconds(cap)}, source);
  const auto delay = policy.backoff(error_of(error_class), attempt);
  RC_ASSERT(delay >= milliseconds(0));
  RC_ASSERT(delay <= milliseconds(cap));
}

RC_GTEST_PROP(RetryPolicyProperty, QuotaNeverNegativeAndNoRetryWhenExhausted, ()) {
  const auto initial = *rc::gen::inRange(0, 60);
  FixedRandom half(0.5);
  RetryPolicy policy({.initial_tokens = initial}, half);
  const auto steps = *rc::gen::container<std::vector<int>>(rc::gen::inRange(0, 8));
  std::vector<RetryAttempt> calls(4);
  for (int step : steps) {
    auto& call = calls[static_cast<std::size_t>(step) % calls.size()];
    if (step < 6) {
      const auto error =
          error_of(ErrorClass::Retryable, kCodes[static_cast<std::size_t>(step % 2)]);
      const int before = policy.tokens();
      const int cost = is_timeout_code(error.code) ? 10 : 5;
      const bool retried = policy.on_failure(error, 1, call).has_value();
      RC_ASSERT(retried == (before >= cost));
      RC_ASSERT(policy.tokens() == (retried ? before - cost : before));
    } else {
      policy.on_success(call);
      call = {};
    }
    RC_ASSERT(policy.tokens() >= 0);
    RC_ASSERT(policy.tokens() <= initial);
  }
}

RC_GTEST_PROP(RetryPolicyProperty, NeverMoreThanMaxAttempts, ()) {
  const auto max_attempts = *rc::gen::inRange(1, 10);
  FixedRandom zero(0.0);
  RetryPolicy policy({.max_attempts = max_attempts}, zero);
  const auto code = *rc::gen::elementOf(kCodes);
  const auto error_class = *rc::gen::elementOf(kClasses);
  RetryAttempt state;
  int attempts = 1;
  while (policy.on_failure(error_of(error_class, code), attempts, state)) ++attempts;
  RC_ASSERT(attempts <= max_attempts);
  if (error_class == ErrorClass::Permanent) RC_ASSERT(attempts == 1);
}

}  // namespace
}  // namespace ic::aws
