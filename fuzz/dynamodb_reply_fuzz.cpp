// Every DynamoDB reply the store and the table provisioner decode, through their real code
// paths: the fuzz input is the HTTP replies (status, headers, body) of a scripted transport.
// Whatever the replies, each call answers with a value or a classified error, never throws.
#include "adapters/dynamodb/dynamodb_store.hpp"
#include "adapters/dynamodb/table_provisioner.hpp"
#include "aws_client_support.hpp"
#include "event/run_blocking.hpp"

namespace {

using namespace std::chrono_literals;

template <class T>
void check(const std::expected<T, ic::Error>& result) {
  if (!result) ic::fuzz::ScriptedAwsClient::check(result.error());
}

}  // namespace

int fuzz_one(const std::uint8_t* data, std::size_t size) {
  const auto [choice, script] = ic::fuzz::select(data, size);
  ic::fuzz::ScriptedAwsClient aws("dynamodb", "DynamoDB_20120810", script);
  ic::dynamodb::DynamoDbIdempotencyStore store(aws.client, {.name = "idempotency"});
  const ic::Instant now = aws.clock.now();
  switch (choice % 7) {
    case 0: {
      const auto claim = ic::event::run_blocking(store.claim({.key = "CHG-1",
                                                              .payload_hash = "h",
                                                              .token = "t",
                                                              .owner = "w",
                                                              .now = now,
                                                              .lease = 60s}));
      check(claim);
      if (claim && claim->outcome == ic::idempotency::ClaimOutcome::Acquired) {
        FUZZ_CHECK(!claim->record.key.empty());
      }
      break;
    }
    case 1:
      check(ic::event::run_blocking(
          store.complete("CHG-1", "t", {.status = "DEBITED", .result_ref = "d"}, now)));
      break;
    case 2:
      check(ic::event::run_blocking(
          store.fail("CHG-1", "t", {.status = "FAILED_PERMANENT", .reason = "R"}, now)));
      break;
    case 3:
      check(ic::event::run_blocking(store.extend("CHG-1", "t", now + 60s)));
      break;
    case 4:
      check(ic::event::run_blocking(store.release("CHG-1", "t")));
      break;
    case 5:
      check(ic::event::run_blocking(store.get("CHG-1")));
      break;
    default: {
      ic::testing::NoSleep no_sleep;
      check(ic::dynamodb::provision_table(
          aws.client, "idempotency",
          {.active_timeout = 0ms, .poll_interval = 0ms, .clock = aws.clock, .sleeper = no_sleep}));
      break;
    }
  }
  return 0;
}
