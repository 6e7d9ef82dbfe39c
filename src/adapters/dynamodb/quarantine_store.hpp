// consumer::QuarantinePort on the idempotency table (docs/design.md §3 "Quarantine records"):
// one item per body, hash key `quarantine#<body SHA-256>`, which no chargeId can take ('#' is
// not among its characters), so a claim never meets one. Written with UpdateItem and read
// with GetItem, the two actions the consumer's and the operator's policies already grant.
//
//   DynamoDbQuarantineStore quarantine(aws.dynamodb(), table, real_clock());
//   container config: .quarantine = &quarantine;   redrive: application::redrive(..., &quarantine)
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "adapters/dynamodb/dynamodb_codec.hpp"
#include "aws/json_client.hpp"
#include "consumer/quarantine.hpp"
#include "core/time.hpp"

namespace ic::dynamodb {

inline constexpr std::string_view kQuarantineKeyPrefix = "quarantine#";

[[nodiscard]] nlohmann::json encode_quarantine_put(const TableSpec& table,
                                                   const consumer::QuarantineRecord& record);
[[nodiscard]] nlohmann::json encode_quarantine_get(const TableSpec& table,
                                                   std::string_view body_sha256);
// nullopt when the reply holds no item; an error when the item is not a quarantine record.
[[nodiscard]] std::expected<std::optional<consumer::QuarantineRecord>, std::string>
decode_quarantine_get(const nlohmann::json& reply);

// Thread-safety: QuarantinePort's (tasks awaited at once on a loop's thread, any number in
// flight). Ownership: borrows client and clock, which must outlive it.
class DynamoDbQuarantineStore final : public consumer::QuarantinePort {
 public:
  DynamoDbQuarantineStore(aws::JsonClient& client, TableSpec table, const Clock& clock)
      : client_(client), table_(std::move(table)), clock_(clock) {}

  [[nodiscard]] Task<std::expected<void, Error>> put(
      const consumer::QuarantineRecord& record) override;
  [[nodiscard]] Task<std::expected<std::optional<consumer::QuarantineRecord>, Error>> find(
      std::string_view body_sha256) override;

 private:
  aws::JsonClient& client_;
  const TableSpec table_;
  const Clock& clock_;
};

}  // namespace ic::dynamodb
