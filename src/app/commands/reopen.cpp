// reopen: the command line and wiring; the rules are application/operations/reopen.cpp and
// OperatorActions::reopen.
#include "adapters/dynamodb/dynamodb_operator_store.hpp"
#include "adapters/dynamodb/dynamodb_store.hpp"
#include "app/cli_support.hpp"
#include "app/operator_ports.hpp"
#include "app/system_adapters.hpp"
#include "application/operations/commands.hpp"

namespace ic::app {
namespace {

struct ReopenState {
  application::ReopenRequest request;
  std::string actor;
};

}  // namespace

void add_reopen(CLI::App& app, SettingsSource& settings, int& exit_code) {
  auto state = std::make_shared<ReopenState>();
  auto& request = state->request;
  auto* cmd = app.add_subcommand(
      "reopen",
      "Let a FAILED charge be attempted again (never a DONE one): conditional on the record "
      "still being the FAILED one read; appends {at, actor, action, reason} to its audit list");
  describe(*cmd,
           "Then redrive its DLQ copies (or use --resend) and check `status` until it is final. "
           "Exit 0 reopened, 3 no record, 4 refused (not FAILED, or the record changed).\n"
           "Example:\n  charge-recovery reopen CHG-20261130-000123 --reason \"account reopened "
           "2026-12-01, ticket OPS-4711\" --resend");
  settings.add_flags(*cmd, kAwsSettings);
  settings.add_flags(*cmd, {"IDEMPOTENCY_TABLE", "CHARGE_QUEUE_URL", "RETENTION_DAYS"});
  cmd->add_option("chargeId", request.charge_id, "the charge's business key")->required();
  cmd->add_option("--reason", request.reason, "why, for the audit entry")
      ->required()
      ->check([](const std::string& text) {
        return text.find_first_not_of(" \t") == std::string::npos ? "must not be empty" : "";
      });
  cmd->add_option("--actor", state->actor, "who, for the audit entry (default: $USER@host)");
  auto* resend = cmd->add_flag("--resend", request.resend,
                               "after the reopen, send the charge the record kept to the "
                               "source queue");
  cmd->callback([&settings, &exit_code, state, resend] {
    auto table = table_and_retention(settings);
    if (!table) {
      exit_code = table.error();
      return;
    }
    std::string queue_url;
    if (resend->count() > 0) {
      auto queue = settings.http_url("CHARGE_QUEUE_URL");
      if (!queue) {
        exit_code = report(queue.error());
        return;
      }
      queue_url = *queue;
    }
    const std::string actor = actor_or_default(state->actor, settings);
    exit_code = with_aws(settings, [&](AwsStack& aws) {
      const auto spec = charge_table(table->table, table->retention);
      dynamodb::DynamoDbIdempotencyStore store(aws.dynamodb(), spec);
      dynamodb::DynamoDbOperatorStore operators(aws.dynamodb(), spec);
      RandomTokens tokens;
      application::OperatorActions actions(store, operators, real_clock(), tokens, actor);
      SqsSourceQueue source(aws.sqs(), queue_url);
      StdConsole console;
      return application::reopen(actions, source, console, state->request);
    });
  });
}

}  // namespace ic::app
