// idempotency::OperatorStore on DynamoDB: each write is one conditional UpdateItem
// (operator_codec), listings are a Query of the sparse attention index or a bounded Scan.
#pragma once

#include <span>
#include <vector>

#include "adapters/dynamodb/dynamodb_codec.hpp"
#include "aws/json_client.hpp"
#include "core/time.hpp"
#include "idempotency/operator_store.hpp"

namespace ic::dynamodb {

// Thread-safety: every method may be called concurrently, from threads outside any loop: each
// blocks its thread for its round trips (event::run_blocking around the JsonClient's tasks);
// the store keeps no mutable state. Ownership: borrows the client, which must outlive it.
class DynamoDbOperatorStore final : public idempotency::OperatorStore {
 public:
  // `sleeper` waits between BatchGetItem rounds for unprocessed keys; borrowed.
  DynamoDbOperatorStore(aws::JsonClient& client, TableSpec table,
                        Sleeper& sleeper = real_sleeper());

  [[nodiscard]] std::expected<idempotency::OperatorWrite, Error> reopen(
      const idempotency::ReopenRequest& request) override;
  [[nodiscard]] std::expected<idempotency::OperatorWrite, Error> amend(
      const idempotency::AmendRequest& request) override;
  [[nodiscard]] std::expected<idempotency::OperatorWrite, Error> settle(
      const idempotency::SettleRequest& request) override;
  [[nodiscard]] std::expected<idempotency::RecordPage, Error> needing_attention(
      std::string_view attention, Instant since, std::string_view cursor) override;
  [[nodiscard]] std::expected<idempotency::RecordPage, Error> stale_in_progress(
      Instant stale_before, std::string_view cursor, int page_items) override;

  // reconcile's reads (docs/design.md §5 "reconcile"). Up to 100 distinct keys per call, one
  // BatchGetItem, its UnprocessedKeys asked for again with backoff; still unprocessed after
  // kBatchRounds, a Throttling error.
  static constexpr int kBatchRounds = 8;
  [[nodiscard]] std::expected<std::vector<idempotency::ClaimRecord>, Error> get_many(
      std::span<const std::string> keys);
  // One page of a Scan for the records debited between `since` and `until` (encode_debited_scan).
  [[nodiscard]] std::expected<idempotency::RecordPage, Error> debited_between(
      Instant since, Instant until, std::string_view cursor, int page_items);

 private:
  [[nodiscard]] std::expected<idempotency::OperatorWrite, Error> write(const nlohmann::json& body);
  [[nodiscard]] std::expected<idempotency::RecordPage, Error> page(
      std::string_view operation, const std::expected<nlohmann::json, std::string>& body);

  aws::JsonClient& client_;
  const TableSpec table_;
  Sleeper& sleeper_;
};

}  // namespace ic::dynamodb
