#include "adapters/dynamodb/dynamodb_operator_store.hpp"

#include "adapters/dynamodb/operator_codec.hpp"

namespace ic::dynamodb {
namespace {

Error permanent(std::string code, std::string message) {
  return Error{
      .error_class = ErrorClass::Permanent, .code = std::move(code), .message = std::move(message)};
}

}  // namespace

DynamoDbOperatorStore::DynamoDbOperatorStore(aws::JsonClient& client, TableSpec table)
    : client_(client), table_(std::move(table)) {}

std::expected<idempotency::OperatorWrite, Error> DynamoDbOperatorStore::reopen(
    const idempotency::ReopenRequest& request) {
  return write(encode_reopen(table_, request));
}

std::expected<idempotency::OperatorWrite, Error> DynamoDbOperatorStore::amend(
    const idempotency::AmendRequest& request) {
  return write(encode_amend(table_, request));
}

std::expected<idempotency::OperatorWrite, Error> DynamoDbOperatorStore::write(
    const nlohmann::json& body) {
  auto reply = client_.call("UpdateItem", body);
  if (reply) return idempotency::OperatorWrite::Written;
  if (reply.error().code == "ConditionalCheckFailedException")
    return idempotency::OperatorWrite::Refused;
  return std::unexpected(reply.error());
}

std::expected<idempotency::RecordPage, Error> DynamoDbOperatorStore::needing_attention(
    std::string_view attention, Instant since, std::string_view cursor) {
  return page("Query", encode_attention_query(table_, attention, since, cursor));
}

std::expected<idempotency::RecordPage, Error> DynamoDbOperatorStore::stale_in_progress(
    Instant stale_before, std::string_view cursor, int page_items) {
  return page("Scan", encode_stale_scan(table_, stale_before, cursor, page_items));
}

std::expected<idempotency::RecordPage, Error> DynamoDbOperatorStore::page(
    std::string_view operation, const std::expected<nlohmann::json, std::string>& body) {
  if (!body) return std::unexpected(permanent("InvalidCursor", body.error()));
  auto reply = client_.call(operation, *body);
  if (!reply) return std::unexpected(reply.error());
  auto decoded = decode_page(table_, *reply);
  if (!decoded) return std::unexpected(permanent("MalformedItem", decoded.error()));
  return std::move(*decoded);
}

}  // namespace ic::dynamodb
