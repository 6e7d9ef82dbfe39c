// list: the command line and wiring; the rules are application/operations/list.cpp.
#include "adapters/dynamodb/dynamodb_operator_store.hpp"
#include "app/cli_support.hpp"
#include "app/operator_ports.hpp"
#include "application/operations/commands.hpp"

namespace ic::app {
namespace {

struct ListState {
  application::ListRequest request;
  std::string since;
};

}  // namespace

void add_list(CLI::App& app, SettingsSource& settings, int& exit_code) {
  auto state = std::make_shared<ListState>();
  auto& request = state->request;
  auto* cmd = app.add_subcommand(
      "list",
      "List the charges that need a person: FAILED or DEBITED_NOTIFICATION_FAILED (from "
      "the sparse attention index), or IN_PROGRESS claims whose lease ended long ago");
  describe(*cmd,
           "One JSON line per record, then {\"event\":\"listed\",...}. IN_PROGRESS is a bounded "
           "Scan (announced on stderr).\nExamples:\n"
           "  charge-recovery list --status FAILED --since 7d\n"
           "  charge-recovery list --status DEBITED_NOTIFICATION_FAILED --since 2026-11-30\n"
           "  charge-recovery list --status IN_PROGRESS --older-than-leases 5 --fail-if-any");
  settings.add_flags(*cmd, kAwsSettings);
  settings.add_flags(*cmd, {"IDEMPOTENCY_TABLE", "LEASE_SECONDS", "RETENTION_DAYS"});
  cmd->add_option("--status", request.status, "which charges")
      ->required()
      ->check(CLI::IsMember({"FAILED", "DEBITED_NOTIFICATION_FAILED", "IN_PROGRESS"}));
  cmd->add_option("--since", state->since,
                  "recorded at or after: YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ, or 90m / 24h / 7d ago");
  cmd->add_option("--older-than-leases", request.older_than_leases,
                  "IN_PROGRESS: lease ended more than this many leases ago")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  cmd->add_flag("--fail-if-any", request.fail_if_any,
                "exit 6 when any record is listed (a scheduled check: the stale-claims CronJob)");
  cmd->add_option("--scan-limit", request.scan_limit, "IN_PROGRESS: items the Scan reads at most")
      ->check(CLI::Range(1, 100'000'000))
      ->capture_default_str();
  cmd->callback([&settings, &exit_code, state] {
    auto table = table_and_retention(settings);
    if (!table) {
      exit_code = table.error();
      return;
    }
    auto lease = lease_setting(settings);
    if (!lease) {
      exit_code = report(lease.error());
      return;
    }
    auto since = time_flag("--since", state->since);
    if (!since) {
      exit_code = since.error();
      return;
    }
    auto& wanted = state->request;
    if (*since) wanted.since = **since;
    wanted.lease = *lease;
    exit_code = with_aws(settings, [&](AwsStack& aws) {
      dynamodb::DynamoDbOperatorStore operators(aws.dynamodb(),
                                                charge_table(table->table, table->retention));
      StdConsole console;
      return application::list(operators, real_clock(), console, wanted);
    });
  });
}

}  // namespace ic::app
