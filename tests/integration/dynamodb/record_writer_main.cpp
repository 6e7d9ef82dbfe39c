// Test helper for tests/system/test_dynamodb_boto3_crossread.py: provisions the table and
// writes one DONE, one FAILED and one IN_PROGRESS record through DynamoDbIdempotencyStore,
// so that boto3 can check how our hand-written protocol code stored them.
//
//   ic_dynamodb_record_writer http://127.0.0.1:PORT TABLE
//   -> {"now_ms":...,"retention_seconds":...,"lease_ms":...}   (exit 0), or an error (exit 1)
#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "adapters/dynamodb/dynamodb_store.hpp"
#include "adapters/dynamodb/table_provisioner.hpp"
#include "event/run_blocking.hpp"
#include "testing/moto_fixture.hpp"

namespace {

using namespace std::chrono_literals;
using namespace ic;

constexpr Instant kNow{Millis{1'764'460'800'123}};
constexpr std::chrono::seconds kRetention = 30 * 24h;
constexpr Millis kLease = 60s;

bool write_records(dynamodb::DynamoDbIdempotencyStore& store) {
  auto claim = [&](const char* key, const char* token) {
    auto claimed = event::run_blocking(store.claim({.key = key,
                                                    .payload_hash = fmt::format("hash-{}", key),
                                                    .token = token,
                                                    .owner = "writer/1",
                                                    .now = kNow,
                                                    .lease = kLease}));
    return claimed && claimed->outcome == idempotency::ClaimOutcome::Acquired;
  };
  return claim("CHG-DONE", "token-done") && claim("CHG-FAILED", "token-failed") &&
         claim("CHG-INPROGRESS", "token-inprogress") &&
         event::run_blocking(store.complete("CHG-DONE", "token-done", {"DEBITED", "DBT-42"},
                                            kNow + 2s)) == idempotency::WriteOutcome::Written &&
         event::run_blocking(store.fail("CHG-FAILED", "token-failed",
                                        {"FAILED_PERMANENT", "INSUFFICIENT_FUNDS"}, kNow + 3s)) ==
             idempotency::WriteOutcome::Written;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fputs("usage: ic_dynamodb_record_writer ENDPOINT TABLE\n", stderr);
    return 2;
  }
  testing::DynamoDbWiring wiring(argv[1]);
  if (auto provisioned = dynamodb::provision_table(wiring.client, argv[2], {}); !provisioned) {
    std::fputs(fmt::format("provisioning failed: {}\n", provisioned.error().code).c_str(), stderr);
    return 1;
  }
  dynamodb::DynamoDbIdempotencyStore store(
      wiring.client, {.name = argv[2], .retention = kRetention, .result_attribute = "debitRef"});
  if (!write_records(store)) {
    std::fputs("writing the records failed\n", stderr);
    return 1;
  }
  std::puts(fmt::format(R"({{"now_ms":{},"retention_seconds":{},"lease_ms":{}}})",
                        kNow.time_since_epoch().count(), kRetention.count(), kLease.count())
                .c_str());
  return 0;
}
