// The IdempotencyStore port on DynamoDB: every write is one conditional request whose
// condition is docs/design.md §3's, so per-key atomicity is DynamoDB's, never ours.
//
//   aws::JsonClient dynamodb(...);                       // DynamoDB_20120810 over SigV4
//   dynamodb::DynamoDbIdempotencyStore store(dynamodb, {.name = "idempotency"});
//   auto claimed = store.claim(request);
#pragma once

#include "adapters/dynamodb/dynamodb_codec.hpp"
#include "aws/json_client.hpp"
#include "idempotency/idempotency_store.hpp"

namespace ic::dynamodb {

// Thread-safety: every method may be called concurrently (the JsonClient is thread-safe and
// the store keeps no mutable state). Ownership: borrows the client, which must outlive it.
class DynamoDbIdempotencyStore final : public idempotency::IdempotencyStore {
 public:
  DynamoDbIdempotencyStore(aws::JsonClient& client, TableSpec table);

  [[nodiscard]] std::expected<idempotency::ClaimResult, Error> claim(
      const idempotency::ClaimRequest& request) override;
  [[nodiscard]] std::expected<idempotency::WriteOutcome, Error> complete(
      std::string_view key, std::string_view token, const idempotency::Completion& completion,
      Instant now) override;
  [[nodiscard]] std::expected<idempotency::WriteOutcome, Error> fail(
      std::string_view key, std::string_view token, const idempotency::Failure& failure,
      Instant now) override;
  [[nodiscard]] std::expected<idempotency::WriteOutcome, Error> extend(
      std::string_view key, std::string_view token, Instant new_lease_until) override;
  [[nodiscard]] std::expected<idempotency::WriteOutcome, Error> release(
      std::string_view key, std::string_view token) override;
  [[nodiscard]] std::expected<std::optional<idempotency::ClaimRecord>, Error> get(
      std::string_view key) override;

 private:
  using Existing = std::expected<std::optional<idempotency::ClaimRecord>, Error>;
  // The record that refused a conditional write: the ALL_OLD item of the error when the store
  // sent it, else one strongly consistent read.
  [[nodiscard]] Existing refusing_record(const aws::AwsError& error, std::string_view key);
  [[nodiscard]] std::expected<idempotency::WriteOutcome, Error> finish(std::string_view key,
                                                                       std::string_view token,
                                                                       const FinalWrite& write);
  [[nodiscard]] std::expected<idempotency::WriteOutcome, Error> set_lease(std::string_view key,
                                                                          std::string_view token,
                                                                          Instant lease_until);

  aws::JsonClient& client_;
  const TableSpec table_;
};

}  // namespace ic::dynamodb
