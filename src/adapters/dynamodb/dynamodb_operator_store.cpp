#include "adapters/dynamodb/dynamodb_operator_store.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>

#include "adapters/dynamodb/operator_codec.hpp"
#include "core/backoff.hpp"
#include "event/run_blocking.hpp"

namespace ic::dynamodb {
namespace {

Error permanent(std::string code, std::string message) {
  return Error{
      .error_class = ErrorClass::Permanent, .code = std::move(code), .message = std::move(message)};
}

}  // namespace

DynamoDbOperatorStore::DynamoDbOperatorStore(aws::JsonClient& client, TableSpec table,
                                             Sleeper& sleeper)
    : client_(client), table_(std::move(table)), sleeper_(sleeper) {}

std::expected<std::vector<idempotency::ClaimRecord>, Error> DynamoDbOperatorStore::get_many(
    std::span<const std::string> keys) {
  std::vector<idempotency::ClaimRecord> records;
  std::vector<std::string> wanted(keys.begin(), keys.end());
  for (int round = 0; !wanted.empty(); ++round) {
    if (round == kBatchRounds) {
      return std::unexpected(
          Error{.error_class = ErrorClass::Throttling,
                .code = "UnprocessedKeys",
                .message = fmt::format("{} keys still unprocessed after {} BatchGetItem rounds",
                                       wanted.size(), kBatchRounds)});
    }
    // Unprocessed keys are DynamoDB shedding load: back off as from a throttle.
    if (round > 0)
      sleeper_.sleep_for(backoff_delay(round - 1, Millis{50}, Millis{5000}, Jitter::Full));
    auto reply =
        event::run_blocking(client_.call("BatchGetItem", encode_batch_get(table_, wanted)));
    if (!reply) return std::unexpected(reply.error());
    auto decoded = decode_batch_get(table_, *reply);
    if (!decoded) return std::unexpected(permanent("MalformedItem", decoded.error()));
    std::ranges::move(decoded->records, std::back_inserter(records));
    wanted = std::move(decoded->unprocessed);
  }
  return records;
}

std::expected<idempotency::RecordPage, Error> DynamoDbOperatorStore::debited_between(
    Instant since, Instant until, std::string_view cursor, int page_items) {
  return page("Scan", encode_debited_scan(table_, since, until, cursor, page_items));
}

std::expected<idempotency::OperatorWrite, Error> DynamoDbOperatorStore::reopen(
    const idempotency::ReopenRequest& request) {
  return write(encode_reopen(table_, request));
}

std::expected<idempotency::OperatorWrite, Error> DynamoDbOperatorStore::settle(
    const idempotency::SettleRequest& request) {
  return write(encode_settle(table_, request));
}

std::expected<idempotency::OperatorWrite, Error> DynamoDbOperatorStore::amend(
    const idempotency::AmendRequest& request) {
  return write(encode_amend(table_, request));
}

std::expected<idempotency::OperatorWrite, Error> DynamoDbOperatorStore::write(
    const nlohmann::json& body) {
  auto reply = event::run_blocking(client_.call("UpdateItem", body));
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
  auto reply = event::run_blocking(client_.call(operation, *body));
  if (!reply) return std::unexpected(reply.error());
  auto decoded = decode_page(table_, *reply);
  if (!decoded) return std::unexpected(permanent("MalformedItem", decoded.error()));
  return std::move(*decoded);
}

}  // namespace ic::dynamodb
