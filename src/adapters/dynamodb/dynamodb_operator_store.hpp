// idempotency::OperatorStore on DynamoDB: each write is one conditional UpdateItem
// (operator_codec), listings are a Query of the sparse attention index or a bounded Scan.
#pragma once

#include "adapters/dynamodb/dynamodb_codec.hpp"
#include "aws/json_client.hpp"
#include "idempotency/operator_store.hpp"

namespace ic::dynamodb {

// Thread-safety: every method may be called concurrently (the JsonClient is thread-safe and
// the store keeps no mutable state). Ownership: borrows the client, which must outlive it.
class DynamoDbOperatorStore final : public idempotency::OperatorStore {
 public:
  DynamoDbOperatorStore(aws::JsonClient& client, TableSpec table);

  [[nodiscard]] std::expected<idempotency::OperatorWrite, Error> reopen(
      const idempotency::ReopenRequest& request) override;
  [[nodiscard]] std::expected<idempotency::OperatorWrite, Error> amend(
      const idempotency::AmendRequest& request) override;
  [[nodiscard]] std::expected<idempotency::RecordPage, Error> needing_attention(
      std::string_view attention, Instant since, std::string_view cursor) override;
  [[nodiscard]] std::expected<idempotency::RecordPage, Error> stale_in_progress(
      Instant stale_before, std::string_view cursor, int page_items) override;

 private:
  [[nodiscard]] std::expected<idempotency::OperatorWrite, Error> write(const nlohmann::json& body);
  [[nodiscard]] std::expected<idempotency::RecordPage, Error> page(
      std::string_view operation, const std::expected<nlohmann::json, std::string>& body);

  aws::JsonClient& client_;
  const TableSpec table_;
};

}  // namespace ic::dynamodb
