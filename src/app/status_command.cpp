// status: one idempotency record, read strongly consistently, as JSON on stdout.
#include <iostream>
#include <nlohmann/json.hpp>

#include "adapters/dynamodb/dynamodb_store.hpp"
#include "app/admin_commands.hpp"

namespace ic::app {
namespace {

std::int64_t epoch_ms(Instant t) {
  return t.time_since_epoch().count();
}

}  // namespace

int status(AwsStack& aws, const StatusOptions& options) {
  dynamodb::DynamoDbIdempotencyStore store(aws.dynamodb(),
                                           charge_table(options.table, options.retention));
  auto record = store.get(options.charge_id);
  if (!record) {
    std::cerr << "status: " << record.error().code << " " << record.error().message << "\n";
    return 1;
  }
  if (!*record) {
    std::cerr << "status: no record for " << options.charge_id << "\n";
    return 3;
  }
  const idem::ClaimRecord& r = **record;
  nlohmann::json out = {{"pk", r.key},
                        {"state", idem::to_string(r.state)},
                        {"status", r.status},
                        {"failureReason", r.failure_reason},
                        {"debitRef", r.result_ref},
                        {"fence", r.fence},
                        {"owner", r.owner},
                        {"claimToken", r.claim_token},
                        {"payloadHash", r.payload_hash},
                        {"leaseUntil", epoch_ms(r.lease_until)},
                        {"createdAt", epoch_ms(r.created_at)},
                        {"updatedAt", epoch_ms(r.updated_at)},
                        {"expiresAt", r.expires_at_epoch_seconds}};
  if (r.completed_at) out["completedAt"] = epoch_ms(*r.completed_at);
  std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace ic::app
