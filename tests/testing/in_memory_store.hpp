// The reference IdempotencyStore of the tests (ic_testing_ports; no production code uses it):
// docs/design.md §3's conditions evaluated under one mutex. It is the first store the contract
// suite (testing/store_contract.hpp) runs over; every other store must pass the same suite.
#pragma once

#include <chrono>
#include <map>
#include <string>

#include "core/thread_annotations.hpp"
#include "idempotency/idempotency_store.hpp"

namespace ic::memory {

// Thread-safety: all methods may be called concurrently, from any number of loops; one mutex
// makes each call atomic, which is exactly the per-item atomicity DynamoDB gives a conditional
// write. Every task finishes when first awaited: the store never suspends.
class InMemoryIdempotencyStore final : public idempotency::IdempotencyStore {
 public:
  explicit InMemoryIdempotencyStore(std::chrono::seconds retention) : retention_(retention) {}

  [[nodiscard]] Task<idempotency::ClaimReply> claim(
      const idempotency::ClaimRequest& request) override;
  [[nodiscard]] Task<idempotency::WriteReply> complete(std::string_view key, std::string_view token,
                                                       const idempotency::Completion& completion,
                                                       Instant now) override;
  [[nodiscard]] Task<idempotency::WriteReply> fail(std::string_view key, std::string_view token,
                                                   const idempotency::Failure& failure,
                                                   Instant now) override;
  [[nodiscard]] Task<idempotency::WriteReply> extend(std::string_view key, std::string_view token,
                                                     Instant new_lease_until) override;
  [[nodiscard]] Task<idempotency::WriteReply> release(std::string_view key,
                                                      std::string_view token) override;
  [[nodiscard]] Task<idempotency::ReadReply> get(std::string_view key) override;

 private:
  // The record our token still holds, or nullptr when the caller is fenced.
  idempotency::ClaimRecord* held_by(std::string_view key, std::string_view token) REQUIRES(mutex_);
  // Final write shared by complete and fail. A retry that finds the very write it asked for,
  // under its own token, succeeds: its first response was lost, not fenced.
  idempotency::WriteOutcome finish(std::string_view key, std::string_view token,
                                   idempotency::ClaimState state, const std::string& status,
                                   const std::string& reason, const std::string& result_ref,
                                   Instant now) REQUIRES(mutex_);
  std::int64_t expiry_after(Instant now) const;

  const std::chrono::seconds retention_;
  Mutex mutex_;
  std::map<std::string, idempotency::ClaimRecord, std::less<>> records_ GUARDED_BY(mutex_);
};

}  // namespace ic::memory
