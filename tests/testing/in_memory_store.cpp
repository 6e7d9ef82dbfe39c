#include "testing/in_memory_store.hpp"

#include "idempotency/own_write.hpp"

namespace ic::memory {

using idempotency::ClaimOutcome;
using idempotency::ClaimRecord;
using idempotency::ClaimState;
using idempotency::WriteOutcome;

std::int64_t InMemoryIdempotencyStore::expiry_after(Instant now) const {
  return std::chrono::duration_cast<std::chrono::seconds>(now.time_since_epoch() + retention_)
      .count();
}

Task<idempotency::ClaimReply> InMemoryIdempotencyStore::claim(
    const idempotency::ClaimRequest& request) {
  MutexLock lock(mutex_);
  auto it = records_.find(request.key);
  if (it != records_.end() && !idempotency::claim_allowed(it->second, request)) {
    co_return idempotency::ClaimResult{
        idempotency::classify_refusal(it->second, request.payload_hash), it->second};
  }
  if (it == records_.end()) {
    it = records_.emplace(request.key, ClaimRecord{.key = request.key, .created_at = request.now})
             .first;
  }
  ClaimRecord& record = it->second;
  record.state = ClaimState::InProgress;
  record.lease_until = request.now + request.lease;
  record.claim_token = request.token;
  record.fence += 1;
  record.owner = request.owner;
  record.payload_hash = request.payload_hash;
  record.updated_at = request.now;
  if (!record.first_attempt_at) record.first_attempt_at = request.now;
  record.expires_at_epoch_seconds = expiry_after(request.now);
  co_return idempotency::ClaimResult{ClaimOutcome::Acquired, record};
}

ClaimRecord* InMemoryIdempotencyStore::held_by(std::string_view key, std::string_view token) {
  auto it = records_.find(key);
  if (it == records_.end()) return nullptr;
  ClaimRecord& record = it->second;
  return record.state == ClaimState::InProgress && record.claim_token == token ? &record : nullptr;
}

WriteOutcome InMemoryIdempotencyStore::finish(std::string_view key, std::string_view token,
                                              ClaimState state, const std::string& status,
                                              const std::string& reason,
                                              const std::string& result_ref, Instant now) {
  ClaimRecord* record = held_by(key, token);
  if (record == nullptr) {
    auto it = records_.find(key);
    const bool own =
        it != records_.end() && idempotency::is_own_final_write(it->second, token, state, status);
    return own ? WriteOutcome::Written : WriteOutcome::Fenced;
  }
  record->state = state;
  record->status = status;
  record->failure_reason = reason;
  record->result_ref = result_ref;
  record->updated_at = now;
  record->completed_at = now;
  record->expires_at_epoch_seconds = expiry_after(now);
  return WriteOutcome::Written;
}

Task<idempotency::WriteReply> InMemoryIdempotencyStore::complete(
    std::string_view key, std::string_view token, const idempotency::Completion& completion,
    Instant now) {
  MutexLock lock(mutex_);
  co_return finish(key, token, ClaimState::Done, completion.status, "", completion.result_ref, now);
}

Task<idempotency::WriteReply> InMemoryIdempotencyStore::fail(std::string_view key,
                                                             std::string_view token,
                                                             const idempotency::Failure& failure,
                                                             Instant now) {
  MutexLock lock(mutex_);
  co_return finish(key, token, ClaimState::Failed, failure.status, failure.reason, "", now);
}

Task<idempotency::WriteReply> InMemoryIdempotencyStore::extend(std::string_view key,
                                                               std::string_view token,
                                                               Instant new_lease_until) {
  MutexLock lock(mutex_);
  ClaimRecord* record = held_by(key, token);
  if (record == nullptr) co_return WriteOutcome::Fenced;
  record->lease_until = new_lease_until;
  co_return WriteOutcome::Written;
}

Task<idempotency::WriteReply> InMemoryIdempotencyStore::release(std::string_view key,
                                                                std::string_view token) {
  MutexLock lock(mutex_);
  ClaimRecord* record = held_by(key, token);
  if (record == nullptr) co_return WriteOutcome::Fenced;
  record->lease_until = Instant{};
  co_return WriteOutcome::Written;
}

Task<idempotency::ReadReply> InMemoryIdempotencyStore::get(std::string_view key) {
  MutexLock lock(mutex_);
  auto it = records_.find(key);
  if (it == records_.end()) co_return std::nullopt;
  co_return it->second;
}

}  // namespace ic::memory
