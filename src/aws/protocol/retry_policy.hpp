// The AWS SDKs' *standard* retry mode as a policy object: which failures are retried, how
// long to back off, and the client-wide retry quota that stops retry storms during outages.
//
//   RetryPolicy policy({}, real_random());   // one per client, shared by all threads
//   RetryAttempt state;
//   for (int attempt = 1;; ++attempt) {
//     auto result = try_once();
//     if (result) { policy.on_success(state); break; }
//     auto delay = policy.on_failure(result.error(), attempt, state);
//     if (!delay) break;   // not retryable, attempts exhausted or quota empty
//     sleep(*delay);
//   }
//
// Defaults follow the cross-SDK standard-mode specification as botocore's `standard.py`
// implements it: 3 attempts, full-jitter backoff random[0,1) * min(base * 2^(attempt-1), 20 s)
// with base 1 s, a 500-token quota, 5 tokens per retry and 10 per timeout retry, refunds of
// 1 token on a first-try success or the last retry's cost on a success after retries.
// The opt-in 2026 update of the specification (transient base 50 ms, throttling base 1 s,
// DynamoDB transient base 25 ms) is a matter of RetryConfig values, not of code.
#pragma once

#include <chrono>
#include <optional>

#include "core/error.hpp"
#include "core/random.hpp"
#include "core/thread_annotations.hpp"

namespace ic::aws {

struct RetryConfig {
  int max_attempts = 3;  // including the first attempt
  std::chrono::milliseconds transient_base{1000};
  std::chrono::milliseconds throttling_base{1000};
  std::chrono::milliseconds max_backoff{20000};
  int initial_tokens = 500;
  int retry_cost = 5;
  int timeout_retry_cost = 10;
  int no_retry_increment = 1;
};

// Per-call bookkeeping, owned by the caller of one logical request (not shared).
struct RetryAttempt {
  int last_cost = 0;  // tokens taken for the most recent retry; 0 when none was taken
};

// True for the error codes the standard mode treats as throttling.
[[nodiscard]] bool is_throttling_code(std::string_view code);
// True for the error codes (not statuses) the standard mode treats as transient.
[[nodiscard]] bool is_transient_code(std::string_view code);
// True for transport timeouts, which cost `timeout_retry_cost` from the quota.
[[nodiscard]] bool is_timeout_code(std::string_view code);

// Thread-safety: one instance is shared by every call of a client; on_failure/on_success and
// tokens() are safe to call concurrently (the quota is guarded by a mutex); the jitter source
// is called under no lock and is thread-safe itself. Ownership: borrows `random`, which must
// outlive the policy.
class RetryPolicy {
 public:
  explicit RetryPolicy(RetryConfig config = {}, Random& random = real_random());

  // Decides after failed attempt number `attempt` (1-based): the delay before the next
  // attempt, or nullopt when the error is permanent, attempts are exhausted or the quota
  // cannot pay for the retry. Takes the retry's cost from the quota when it says yes.
  [[nodiscard]] std::optional<std::chrono::milliseconds> on_failure(const Error& error, int attempt,
                                                                    RetryAttempt& state);

  // Refunds the quota after a call succeeded.
  void on_success(const RetryAttempt& state);

  // The full-jitter backoff before attempt `attempt + 1`, always within [0, max_backoff].
  [[nodiscard]] std::chrono::milliseconds backoff(const Error& error, int attempt) const;

  [[nodiscard]] int tokens() const;
  [[nodiscard]] const RetryConfig& config() const { return config_; }

 private:
  RetryConfig config_;
  Random& random_;
  mutable Mutex mutex_;
  int tokens_ GUARDED_BY(mutex_);  // 0 <= tokens_ <= config_.initial_tokens
};

}  // namespace ic::aws
