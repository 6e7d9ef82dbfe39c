// The IdempotencyStore port on DynamoDB: every write is one conditional request whose
// condition is docs/design.md §3's, so per-key atomicity is DynamoDB's, never ours.
//
//   aws::JsonClient dynamodb(...);                       // DynamoDB_20120810 over SigV4
//   dynamodb::DynamoDbIdempotencyStore store(dynamodb, {.name = "idempotency"});
//   auto claimed = co_await store.claim(request);
#pragma once

#include "adapters/dynamodb/dynamodb_codec.hpp"
#include "aws/json_client.hpp"
#include "idempotency/idempotency_store.hpp"

namespace ic::dynamodb {

// Thread-safety: IdempotencyStore's (tasks awaited at once on a loop's thread, any number in
// flight); the store keeps no mutable state. Ownership: borrows the client, which must outlive
// it.
class DynamoDbIdempotencyStore final : public idempotency::IdempotencyStore {
 public:
  DynamoDbIdempotencyStore(aws::JsonClient& client, TableSpec table);

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
  // The record that refused a conditional write: the ALL_OLD item of the error when the store
  // sent it, else one strongly consistent read.
  [[nodiscard]] Task<idempotency::ReadReply> refusing_record(const aws::AwsError& error,
                                                             std::string_view key);
  [[nodiscard]] Task<idempotency::WriteReply> finish(std::string_view key, std::string_view token,
                                                     FinalWrite write);
  [[nodiscard]] Task<idempotency::WriteReply> set_lease(std::string_view key,
                                                        std::string_view token,
                                                        Instant lease_until);

  aws::JsonClient& client_;
  const TableSpec table_;
};

}  // namespace ic::dynamodb
