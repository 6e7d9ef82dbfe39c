// The command line of list, renotify and reopen: the charges that need a person, and the
// audited actions on them.
#include <CLI/CLI.hpp>
#include <iostream>

#include "app/admin_commands.hpp"
#include "app/cli_support.hpp"
#include "app/system_adapters.hpp"
#include "app/time_arg.hpp"
#include "domain/charge_status.hpp"

namespace ic::app {
namespace {

const std::initializer_list<std::string_view> kAwsSettings = {
    "AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_DYNAMODB"};

// The record commands' common settings; the error, if any, already reported.
std::expected<std::pair<std::string, std::chrono::seconds>, int> table_and_retention(
    const SettingsSource& settings) {
  auto table = settings.required("IDEMPOTENCY_TABLE");
  if (!table) return std::unexpected(report(table.error()));
  auto retention = settings.integer("RETENTION_DAYS", 15, 3650);
  if (!retention) return std::unexpected(report(retention.error()));
  return std::pair{*table, std::chrono::seconds(std::chrono::days(*retention))};
}

std::string actor_or_default(const std::string& given, const SettingsSource& settings) {
  return given.empty() ? operator_identity(settings.as_env()("USER").value_or("")) : given;
}

void add_list(CLI::App& app, SettingsSource& settings, OperatorCommandState& state,
              int& exit_code) {
  ListOptions& options = state.list;
  std::string& since = state.since;
  auto* cmd = app.add_subcommand(
      "list",
      "List the charges that need a person: FAILED or DEBITED_NOTIFICATION_FAILED (from "
      "the sparse attention index), or IN_PROGRESS claims whose lease ended long ago");
  describe(*cmd,
           "One JSON line per record, then {\"event\":\"listed\",...}. IN_PROGRESS is a bounded "
           "Scan (announced on stderr).\nExamples:\n"
           "  charge-recovery list --status FAILED --since 7d\n"
           "  charge-recovery list --status DEBITED_NOTIFICATION_FAILED --since 2026-11-30\n"
           "  charge-recovery list --status IN_PROGRESS --older-than-leases 5");
  settings.add_flags(*cmd, kAwsSettings);
  settings.add_flags(*cmd, {"IDEMPOTENCY_TABLE", "LEASE_SECONDS", "RETENTION_DAYS"});
  cmd->add_option("--status", options.status, "which charges")
      ->required()
      ->check(CLI::IsMember({"FAILED", "DEBITED_NOTIFICATION_FAILED", "IN_PROGRESS"}));
  cmd->add_option("--since", since,
                  "recorded at or after: YYYY-MM-DD, YYYY-MM-DDTHH:MM:SSZ, or 90m / 24h / 7d ago");
  cmd->add_option("--older-than-leases", options.older_than_leases,
                  "IN_PROGRESS: lease ended more than this many leases ago")
      ->check(CLI::Range(0, 1'000'000))
      ->capture_default_str();
  cmd->add_option("--scan-limit", options.scan_limit, "IN_PROGRESS: items the Scan reads at most")
      ->check(CLI::Range(1, 100'000'000))
      ->capture_default_str();
  cmd->callback([&settings, &exit_code, &options, &since] {
    auto table = table_and_retention(settings);
    if (!table) {
      exit_code = table.error();
      return;
    }
    auto lease = settings.integer("LEASE_SECONDS", 1, 43'200);
    if (!lease) {
      exit_code = report(lease.error());
      return;
    }
    if (!since.empty()) {
      auto at = parse_since(since, real_clock().now());
      if (!at) {
        exit_code = report({"--since: " + at.error()});
        return;
      }
      options.since = *at;
    }
    std::tie(options.table, options.retention) = *table;
    options.lease = std::chrono::seconds(*lease);
    exit_code = with_aws(settings, [&options](AwsStack& aws) { return list(aws, options); });
  });
}

void add_renotify(CLI::App& app, SettingsSource& settings, OperatorCommandState& state,
                  int& exit_code) {
  RenotifyOptions& options = state.renotify;
  std::string& actor = state.renotify_actor;
  auto* cmd = app.add_subcommand(
      "renotify",
      "Re-send the notification of DEBITED_NOTIFICATION_FAILED charges (same <chargeId>:notify "
      "key), then record DEBITED; the attempt is audited; the debit is never touched");
  describe(*cmd,
           "Exit 0 sent, 3 no record, 4 refused (not DEBITED_NOTIFICATION_FAILED, or the record "
           "changed), 5 the notification failed again (recorded as an attempt).\nExamples:\n"
           "  charge-recovery renotify CHG-20261130-000123\n"
           "  charge-recovery renotify --all-failed-notifications");
  settings.add_flags(*cmd, kAwsSettings);
  settings.add_flags(
      *cmd, {"IDEMPOTENCY_TABLE", "NOTIFICATION_URL", "RETENTION_DAYS", "NOTIFICATION_TOKEN_FILE",
             "BANK_TLS_CERT_FILE", "BANK_TLS_KEY_FILE", "BANK_TLS_CA_FILE"});
  auto* id = cmd->add_option("chargeId", options.charge_id, "the charge's business key");
  auto* all = cmd->add_flag("--all-failed-notifications", options.all_failed_notifications,
                            "every DEBITED_NOTIFICATION_FAILED charge");
  id->excludes(all);
  cmd->add_option("--actor", actor, "who, for the audit entry (default: $USER@host)");
  cmd->callback([&settings, &exit_code, &options, &actor, id, all] {
    if (id->count() + all->count() != 1) {
      std::cerr << "usage error: renotify: give a chargeId or --all-failed-notifications\n";
      exit_code = kConfigErrorExit;
      return;
    }
    auto table = table_and_retention(settings);
    auto url = table ? settings.http_url("NOTIFICATION_URL")
                     : std::expected<std::string, ConfigError>(std::string{});
    if (!table || !url) {
      exit_code = !table ? table.error() : report(url.error());
      return;
    }
    auto bank_auth = load_bank_auth(settings);
    if (!bank_auth) {
      exit_code = report(bank_auth.error());
      return;
    }
    std::tie(options.table, options.retention) = *table;
    options.notification_url = *url;
    options.bank_auth = *bank_auth;
    options.actor = actor_or_default(actor, settings);
    exit_code = with_aws(settings, [&options](AwsStack& aws) { return renotify(aws, options); });
  });
}

void add_reopen(CLI::App& app, SettingsSource& settings, OperatorCommandState& state,
                int& exit_code) {
  ReopenOptions& options = state.reopen;
  std::string& actor = state.reopen_actor;
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
  cmd->add_option("chargeId", options.charge_id, "the charge's business key")->required();
  cmd->add_option("--reason", options.reason, "why, for the audit entry")
      ->required()
      ->check([](const std::string& text) {
        return text.find_first_not_of(" \t") == std::string::npos ? "must not be empty" : "";
      });
  cmd->add_option("--actor", actor, "who, for the audit entry (default: $USER@host)");
  auto* resend = cmd->add_flag("--resend", options.resend,
                               "after the reopen, send the charge the record kept to the source "
                               "queue");
  cmd->callback([&settings, &exit_code, &options, &actor, resend] {
    auto table = table_and_retention(settings);
    if (!table) {
      exit_code = table.error();
      return;
    }
    if (resend->count() > 0) {
      auto queue = settings.http_url("CHARGE_QUEUE_URL");
      if (!queue) {
        exit_code = report(queue.error());
        return;
      }
      options.queue_url = *queue;
    }
    std::tie(options.table, options.retention) = *table;
    options.actor = actor_or_default(actor, settings);
    exit_code = with_aws(settings, [&options](AwsStack& aws) { return reopen(aws, options); });
  });
}

}  // namespace

void add_operator_commands(CLI::App& app, SettingsSource& settings, OperatorCommandState& state,
                           int& exit_code) {
  add_list(app, settings, state, exit_code);
  add_renotify(app, settings, state, exit_code);
  add_reopen(app, settings, state, exit_code);
}

}  // namespace ic::app
