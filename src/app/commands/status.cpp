// status: one idempotency record, read strongly consistently, as JSON on stdout.
#include <iostream>
#include <nlohmann/json.hpp>

#include "adapters/dynamodb/dynamodb_store.hpp"
#include "app/cli_support.hpp"
#include "application/operations/report.hpp"
#include "event/run_blocking.hpp"

namespace ic::app {
namespace {

struct StatusOptions {
  std::string table;
  std::string charge_id;
  std::chrono::seconds retention{30 * 24 * 3600};
};

int status(AwsStack& aws, const StatusOptions& options) {
  dynamodb::DynamoDbIdempotencyStore store(aws.dynamodb(),
                                           charge_table(options.table, options.retention));
  auto record = event::run_blocking(store.get(options.charge_id));
  if (!record) {
    std::cerr << "status: " << record.error().code << " " << record.error().message << "\n";
    return 1;
  }
  if (!*record) {
    std::cerr << "status: no record for " << options.charge_id << "\n";
    return 3;
  }
  const idempotency::ClaimRecord& r = **record;
  // Only the attributes the record has: an absent attribute means "not applicable" (§3).
  nlohmann::json out = {
      {"pk", r.key}, {"state", idempotency::to_string(r.state)}, {"fence", r.fence}};
  for (auto [name, value] :
       {std::pair{"status", &r.status}, std::pair{"failureReason", &r.failure_reason},
        std::pair{"debitRef", &r.result_ref}, std::pair{"owner", &r.owner},
        std::pair{"claimToken", &r.claim_token}, std::pair{"payloadHash", &r.payload_hash}}) {
    if (!value->empty()) out[name] = *value;
  }
  out["leaseUntil"] = application::iso(r.lease_until);
  out["createdAt"] = application::iso(r.created_at);
  out["updatedAt"] = application::iso(r.updated_at);
  if (r.completed_at) out["completedAt"] = application::iso(*r.completed_at);
  out["expiresAt"] = application::iso(Instant{std::chrono::seconds(r.expires_at_epoch_seconds)});
  // The kept payload holds the full account number: only its presence is shown.
  if (!r.payload.empty()) out["payloadKept"] = true;
  if (!r.audit.empty()) {
    out["audit"] = nlohmann::json::array();
    for (const idempotency::AuditEntry& entry : r.audit) {
      out["audit"].push_back({{"at", application::iso(entry.at)},
                              {"actor", entry.actor},
                              {"action", entry.action},
                              {"reason", entry.reason}});
    }
  }
  std::cout << out.dump(2) << "\n";
  return 0;
}

}  // namespace

void add_status(CLI::App& app, SettingsSource& settings, int& exit_code) {
  auto options = std::make_shared<StatusOptions>();
  auto* cmd = app.add_subcommand("status", "Print the idempotency record of one chargeId as JSON");
  describe(*cmd,
           "Exit 0 found, 3 no record.\nExample:\n  charge-recovery status "
           "CHG-20261130-000123 --table charge-idempotency");
  settings.add_flags(*cmd, kAwsSettings);
  settings.add_flags(*cmd, {"IDEMPOTENCY_TABLE"});
  cmd->add_option("chargeId", options->charge_id, "the charge's business key")->required();
  cmd->callback([&settings, &exit_code, options] {
    auto table = settings.required("IDEMPOTENCY_TABLE");
    if (!table) {
      exit_code = report(table.error());
      return;
    }
    options->table = *table;
    exit_code = with_aws(settings, [&](AwsStack& aws) { return status(aws, *options); });
  });
}

}  // namespace ic::app
