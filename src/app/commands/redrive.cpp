// redrive: the command line and wiring; the rules are application/operations/redrive.cpp.
#include "adapters/dynamodb/quarantine_store.hpp"
#include "app/cli_support.hpp"
#include "app/operator_ports.hpp"
#include "application/operations/commands.hpp"

namespace ic::app {
namespace {

struct RedriveState {
  application::RedriveRequest request;
  int max = 0;
  std::vector<std::string> reasons;
};

}  // namespace

void add_redrive(CLI::App& app, SettingsSource& settings, int& exit_code) {
  auto state = std::make_shared<RedriveState>();
  auto* cmd = app.add_subcommand(
      "redrive",
      "Move dead-lettered messages back to the source queue (body and producer attributes "
      "unchanged): by default only those SQS dead-lettered itself, each at most once per run");
  describe(
      *cmd,
      "Messages with a failureReason stay unless --reason names it; so do messages without one "
      "whose reason the consumer quarantined (the DLQ copy could not carry it). The run "
      "examines at most "
      "the DLQ's depth at its start and prints a summary by reason.\nExamples:\n"
      "  charge-recovery redrive --dry-run\n"
      "  charge-recovery redrive --reason PERMANENT_DEBIT_FAILURE --reason "
      "PREVIOUSLY_FAILED --max 100");
  settings.add_flags(*cmd, kAwsSettings);
  settings.add_flags(*cmd, {"CHARGE_QUEUE_URL", "CHARGE_DLQ_URL", "IDEMPOTENCY_TABLE"});
  auto* max_opt = cmd->add_option("--max", state->max, "move at most this many")
                      ->check(CLI::Range(1, 10'000'000));
  cmd->add_option("--reason", state->reasons,
                  "also move messages dead-lettered with this failureReason (repeatable)")
      ->check(CLI::IsMember({"INVALID_MESSAGE", "PAYLOAD_MISMATCH", "PERMANENT_DEBIT_FAILURE",
                             "PREVIOUSLY_FAILED", "DEBIT_UNCERTAIN"}));
  cmd->add_flag("--dry-run", state->request.dry_run,
                "list what would move (reason, chargeId, age); move nothing");
  cmd->callback([&settings, &exit_code, state, max_opt] {
    auto queue = settings.http_url("CHARGE_QUEUE_URL");
    auto dlq = settings.http_url("CHARGE_DLQ_URL");
    auto table = settings.required("IDEMPOTENCY_TABLE");  // the quarantine records
    if (!queue || !dlq || !table) {
      exit_code = report(!queue ? queue.error() : !dlq ? dlq.error() : table.error());
      return;
    }
    auto& request = state->request;
    if (max_opt->count() > 0) request.max_messages = state->max;
    request.reasons.insert(state->reasons.begin(), state->reasons.end());
    exit_code = with_aws(settings, [&](AwsStack& aws) {
      SqsSourceQueue source(aws.sqs(), *queue);
      SqsDeadLetterQueue dead_letters(aws.sqs(), *dlq);
      dynamodb::DynamoDbQuarantineStore quarantine(aws.dynamodb(), {.name = *table}, real_clock());
      StdConsole console;
      return application::redrive(dead_letters, source, real_clock(), console, request,
                                  &quarantine);
    });
  });
}

}  // namespace ic::app
