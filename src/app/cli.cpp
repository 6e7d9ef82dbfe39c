#include "app/cli.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <iostream>

#include "app/admin_commands.hpp"
#include "app/build_info.hpp"
#include "app/cli_support.hpp"
#include "app/run_command.hpp"

namespace ic::app {
namespace {

const std::initializer_list<std::string_view> kAwsSettings = {
    "AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_DYNAMODB",
    "AWS_ENDPOINT_URL_STS"};

std::expected<std::string, ConfigError> table_name(const SettingsSource& settings) {
  return settings.required("IDEMPOTENCY_TABLE");
}

}  // namespace

int run_cli(int argc, char** argv, const aws::EnvLookup& env) {
  CLI::App app{
      "charge-recovery: exactly-once recorded debits of FinEdge service charges from an SQS "
      "queue, protected by conditional writes to a DynamoDB idempotency table."};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_line());
  app.footer(version_line());
  SettingsSource settings(env);
  int exit_code = 0;

  auto* run = app.add_subcommand("run", "Consume the charge queue until SIGTERM/SIGINT");
  describe(
      *run,
      "Example:\n  AWS_REGION=ap-south-1 CHARGE_QUEUE_URL=https://sqs.../charge-due \\\n"
      "  CHARGE_DLQ_URL=https://sqs.../charge-due-dlq IDEMPOTENCY_TABLE=charge-idempotency \\\n"
      "  CORE_BANKING_URL=https://core.bank.internal NOTIFICATION_URL=https://notify.internal \\\n"
      "  charge-recovery run --workers 32");
  settings.add_flags(*run, kAwsSettings);
  settings.add_flags(*run, {"CHARGE_QUEUE_URL", "CHARGE_DLQ_URL", "IDEMPOTENCY_TABLE",
                            "LEASE_SECONDS", "WORKERS", "CORE_BANKING_URL", "NOTIFICATION_URL",
                            "RETENTION_DAYS", "ADMIN_ADDR", "LOG_LEVEL", "SHUTDOWN_GRACE_SECONDS"});
  settings.add_flags(*run, {"PROBE_INTERVAL_SECONDS", "RECEIVERS"});
  settings.add_flags(*run, {"CORE_BANKING_TOKEN_FILE", "NOTIFICATION_TOKEN_FILE",
                            "BANK_TLS_CERT_FILE", "BANK_TLS_KEY_FILE", "BANK_TLS_CA_FILE"});
  run->callback([&] {
    auto run_settings = load_run_settings(settings);
    if (!run_settings) {
      exit_code = report(run_settings.error());
      return;
    }
    exit_code = run_consumer(*run_settings, settings.as_env());
  });

  ProvisionOptions provision_options;
  auto* provision_cmd =
      app.add_subcommand("provision",
                         "Create the idempotency table (TTL on expiresAt) and both queues with the "
                         "redrive policy; safe to run twice");
  describe(*provision_cmd,
           "Prints IDEMPOTENCY_TABLE=, CHARGE_QUEUE_URL= and CHARGE_DLQ_URL= lines.\nExample:\n"
           "  eval \"$(AWS_ENDPOINT_URL=http://127.0.0.1:5000 charge-recovery provision "
           "--table charge-idempotency)\"");
  settings.add_flags(*provision_cmd, kAwsSettings);
  settings.add_flags(*provision_cmd, {"IDEMPOTENCY_TABLE", "LEASE_SECONDS"});
  provision_cmd->add_option("--queue-name", provision_options.queue_name, "source queue name")
      ->capture_default_str();
  provision_cmd->add_option("--dlq-name", provision_options.dlq_name, "dead-letter queue name")
      ->capture_default_str();
  provision_cmd
      ->add_option("--max-receive-count", provision_options.max_receive_count,
                   "receives before SQS moves a message to the DLQ")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  provision_cmd->callback([&] {
    auto table = table_name(settings);
    auto lease = settings.integer("LEASE_SECONDS", 1, 43'200);
    if (!table || !lease) {
      exit_code = report(!table ? table.error() : lease.error());
      return;
    }
    provision_options.table = *table;
    provision_options.visibility_timeout_seconds = *lease;
    exit_code =
        with_aws(settings, [&](AwsStack& aws) { return provision(aws, provision_options); });
  });

  SendOptions send_options;
  auto* send_cmd = app.add_subcommand(
      "send",
      "Publish ChargeDueEvents: each line of a JSONL file, or generated charges with a "
      "share re-sent under the same chargeId");
  describe(*send_cmd,
           "Examples:\n  charge-recovery send --queue-url $CHARGE_QUEUE_URL --file events.jsonl\n"
           "  charge-recovery send --queue-url $CHARGE_QUEUE_URL --count 10000 "
           "--duplicate-rate 0.3 --seed 7");
  settings.add_flags(*send_cmd, kAwsSettings);
  settings.add_flags(*send_cmd, {"CHARGE_QUEUE_URL"});
  auto* file_opt = send_cmd->add_option("--file", send_options.file, "JSONL file of bodies");
  send_cmd->add_option("--count", send_options.count, "generated unique charges")
      ->check(CLI::Range(1, 10'000'000))
      ->excludes(file_opt);
  send_cmd
      ->add_option("--duplicate-rate", send_options.duplicate_rate,
                   "extra resends as a fraction of --count (0.3 = 30%)")
      ->check(CLI::Range(0.0, 10.0));
  send_cmd->add_option("--seed", send_options.seed, "random seed")->capture_default_str();
  send_cmd->add_option("--id-prefix", send_options.id_prefix, "chargeId prefix")
      ->capture_default_str();
  send_cmd->add_option("--due-date", send_options.due_date, "dueDate of generated charges")
      ->capture_default_str();
  send_cmd->callback([&] {
    auto queue = settings.http_url("CHARGE_QUEUE_URL");
    if (!queue) {
      exit_code = report(queue.error());
      return;
    }
    if (send_options.file.empty() && send_options.count == 0) {
      std::cerr << "send: give --file or --count\n";
      exit_code = 2;
      return;
    }
    send_options.queue_url = *queue;
    exit_code = with_aws(settings, [&](AwsStack& aws) { return send(aws, send_options); });
  });

  StatusOptions status_options;
  auto* status_cmd =
      app.add_subcommand("status", "Print the idempotency record of one chargeId as JSON");
  describe(*status_cmd,
           "Exit 0 found, 3 no record.\nExample:\n  charge-recovery status "
           "CHG-20261130-000123 --table charge-idempotency");
  settings.add_flags(*status_cmd, kAwsSettings);
  settings.add_flags(*status_cmd, {"IDEMPOTENCY_TABLE"});
  status_cmd->add_option("chargeId", status_options.charge_id, "the charge's business key")
      ->required();
  status_cmd->callback([&] {
    auto table = table_name(settings);
    if (!table) {
      exit_code = report(table.error());
      return;
    }
    status_options.table = *table;
    exit_code = with_aws(settings, [&](AwsStack& aws) { return status(aws, status_options); });
  });

  RedriveOptions redrive_options;
  int redrive_max = 0;
  std::vector<std::string> redrive_reasons;
  auto* redrive_cmd = app.add_subcommand(
      "redrive",
      "Move dead-lettered messages back to the source queue (body and producer attributes "
      "unchanged): by default only those SQS dead-lettered itself, each at most once per run");
  describe(*redrive_cmd,
           "Messages with a failureReason stay unless --reason names it. The run examines at most "
           "the DLQ's depth at its start and prints a summary by reason.\nExamples:\n"
           "  charge-recovery redrive --dry-run\n"
           "  charge-recovery redrive --reason PERMANENT_DEBIT_FAILURE --reason "
           "PREVIOUSLY_FAILED --max 100");
  settings.add_flags(*redrive_cmd, kAwsSettings);
  settings.add_flags(*redrive_cmd, {"CHARGE_QUEUE_URL", "CHARGE_DLQ_URL"});
  auto* max_opt = redrive_cmd->add_option("--max", redrive_max, "move at most this many")
                      ->check(CLI::Range(1, 10'000'000));
  redrive_cmd
      ->add_option("--reason", redrive_reasons,
                   "also move messages dead-lettered with this failureReason (repeatable)")
      ->check(CLI::IsMember(
          {"INVALID_MESSAGE", "PAYLOAD_MISMATCH", "PERMANENT_DEBIT_FAILURE", "PREVIOUSLY_FAILED"}));
  redrive_cmd->add_flag("--dry-run", redrive_options.dry_run,
                        "list what would move (reason, chargeId, age); move nothing");
  redrive_cmd->callback([&] {
    auto queue = settings.http_url("CHARGE_QUEUE_URL");
    auto dlq = settings.http_url("CHARGE_DLQ_URL");
    if (!queue || !dlq) {
      exit_code = report(!queue ? queue.error() : dlq.error());
      return;
    }
    redrive_options.queue_url = *queue;
    redrive_options.dlq_url = *dlq;
    if (max_opt->count() > 0) redrive_options.max_messages = redrive_max;
    redrive_options.reasons.insert(redrive_reasons.begin(), redrive_reasons.end());
    exit_code = with_aws(settings, [&](AwsStack& aws) { return redrive(aws, redrive_options); });
  });

  OperatorCommandState operator_state;
  add_operator_commands(app, settings, operator_state, exit_code);

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    // One line and exit 2, like a configuration error (CLI11's own codes are 100+).
    std::string line = e.what();
    std::ranges::replace(line, '\n', ' ');
    std::cerr << fmt::format("usage error: {} (see --help)\n", line);
    return kConfigErrorExit;
  }
  return exit_code;
}

std::string version_line() {
  return fmt::format("charge-recovery {} (commit {})", kVersion, kCommit);
}

void describe(CLI::App& command, const std::string& footer) {
  command.footer(footer + "\n\n" + version_line());
  command.set_version_flag("--version", version_line());
}

}  // namespace ic::app
