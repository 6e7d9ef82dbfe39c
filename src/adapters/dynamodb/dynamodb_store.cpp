#include "adapters/dynamodb/dynamodb_store.hpp"

#include <fmt/format.h>

#include "idempotency/own_write.hpp"

namespace ic::dynamodb {
namespace {

using idempotency::WriteOutcome;

constexpr std::string_view kConditionFailed = "ConditionalCheckFailedException";

// A claim whose outcome is unknown (ambiguous failure, or the refusing record changed before
// we could read it) is sent once more. The same token makes a re-sent claim that already took
// effect succeed instead of reporting itself as a duplicate. One more round, not more: each
// round may already be three attempts, and a claim must be decided well within a lease.
constexpr int kClaimRounds = 2;

Error malformed(std::string_view what, const std::string& detail) {
  return Error{.error_class = ErrorClass::Permanent,
               .code = "MalformedItem",
               .message = fmt::format("{}: {}", what, detail)};
}

Error unreadable_claim_reply(const std::string& detail) {
  return Error{.error_class = ErrorClass::Retryable,
               .code = "MalformedResponse",
               .message = fmt::format("claim reply: {}", detail),
               .ambiguous = true};
}

}  // namespace

DynamoDbIdempotencyStore::DynamoDbIdempotencyStore(aws::JsonClient& client, TableSpec table)
    : client_(client), table_(std::move(table)) {}

Task<idempotency::ClaimReply> DynamoDbIdempotencyStore::claim(
    const idempotency::ClaimRequest& request) {
  const auto body = encode_claim(table_, request);
  std::optional<Error> last_error;
  for (int round = 0; round < kClaimRounds; ++round) {
    auto reply = co_await client_.call_with_body("UpdateItem", body);
    if (reply) {
      const auto attributes = reply->find("Attributes");
      auto record = attributes == reply->end() ? decode_record(table_, nlohmann::json::object())
                                               : decode_record(table_, *attributes);
      // The claim was written but the answer is unreadable: the same token makes the retry
      // recognise it, so this is the ambiguous kind, not a broken record.
      if (!record) co_return std::unexpected(unreadable_claim_reply(record.error()));
      co_return idempotency::ClaimResult{.outcome = idempotency::ClaimOutcome::Acquired,
                                         .record = *record};
    }
    const aws::AwsError& error = reply.error();
    if (error.code != kConditionFailed) {
      if (!error.ambiguous) co_return std::unexpected(error);
      last_error = error;
      continue;
    }
    auto existing = co_await refusing_record(error, request.key);
    if (!existing) co_return std::unexpected(existing.error());
    // Without ALL_OLD the record we read may postdate the refusal (gone by TTL, or freed):
    // then only another claim can tell.
    if (!*existing || idempotency::claim_allowed(**existing, request)) continue;
    co_return idempotency::ClaimResult{
        .outcome = idempotency::classify_refusal(**existing, request.payload_hash),
        .record = **existing};
  }
  co_return std::unexpected(
      last_error.value_or(Error{.error_class = ErrorClass::Retryable,
                                .code = "ClaimUndecided",
                                .message = fmt::format("claim of {} not decided after {} rounds",
                                                       request.key, kClaimRounds)}));
}

Task<idempotency::WriteReply> DynamoDbIdempotencyStore::complete(
    std::string_view key, std::string_view token, const idempotency::Completion& completion,
    Instant now) {
  return finish(key, token,
                {.state = idempotency::ClaimState::Done,
                 .status = completion.status,
                 .result_ref = completion.result_ref,
                 .payload = completion.payload,
                 .now = now});
}

Task<idempotency::WriteReply> DynamoDbIdempotencyStore::fail(std::string_view key,
                                                             std::string_view token,
                                                             const idempotency::Failure& failure,
                                                             Instant now) {
  return finish(key, token,
                {.state = idempotency::ClaimState::Failed,
                 .status = failure.status,
                 .failure_reason = failure.reason,
                 .payload = failure.payload,
                 .now = now});
}

// `write` by value: complete() and fail() hand over a temporary and return at once.
Task<idempotency::WriteReply> DynamoDbIdempotencyStore::finish(std::string_view key,
                                                               std::string_view token,
                                                               FinalWrite write) {
  auto reply =
      co_await client_.call_with_body("UpdateItem", encode_final(table_, key, token, write));
  if (reply) co_return WriteOutcome::Written;
  if (reply.error().code != kConditionFailed) co_return std::unexpected(reply.error());
  auto existing = co_await refusing_record(reply.error(), key);
  if (!existing) co_return std::unexpected(existing.error());
  const bool own =
      *existing && idempotency::is_own_final_write(**existing, token, write.state, write.status);
  co_return own ? WriteOutcome::Written : WriteOutcome::Fenced;
}

Task<idempotency::WriteReply> DynamoDbIdempotencyStore::extend(std::string_view key,
                                                               std::string_view token,
                                                               Instant new_lease_until) {
  return set_lease(key, token, new_lease_until);
}

Task<idempotency::WriteReply> DynamoDbIdempotencyStore::release(std::string_view key,
                                                                std::string_view token) {
  return set_lease(key, token, Instant{});
}

Task<idempotency::WriteReply> DynamoDbIdempotencyStore::set_lease(std::string_view key,
                                                                  std::string_view token,
                                                                  Instant lease_until) {
  auto reply = co_await client_.call_with_body("UpdateItem",
                                               encode_set_lease(table_, key, token, lease_until));
  if (reply) co_return WriteOutcome::Written;
  if (reply.error().code == kConditionFailed) co_return WriteOutcome::Fenced;
  co_return std::unexpected(reply.error());
}

Task<idempotency::ReadReply> DynamoDbIdempotencyStore::get(std::string_view key) {
  auto reply = co_await client_.call_with_body("GetItem", encode_get(table_, key));
  if (!reply) co_return std::unexpected(reply.error());
  auto item = reply->find("Item");
  if (item == reply->end() || item->empty()) co_return std::nullopt;
  auto record = decode_record(table_, *item);
  if (!record) co_return std::unexpected(malformed("GetItem reply", record.error()));
  co_return std::optional<idempotency::ClaimRecord>(std::move(*record));
}

Task<idempotency::ReadReply> DynamoDbIdempotencyStore::refusing_record(const aws::AwsError& error,
                                                                       std::string_view key) {
  if (auto item = old_item_from_error_body(error.response_body)) {
    auto record = decode_record(table_, *item);
    if (!record) co_return std::unexpected(malformed("ALL_OLD item", record.error()));
    co_return std::optional<idempotency::ClaimRecord>(std::move(*record));
  }
  auto read = co_await get(key);
  co_return read;
}

}  // namespace ic::dynamodb
