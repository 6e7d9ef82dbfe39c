// renotify: the command line and wiring; the rules are application/operations/renotify.cpp
// and OperatorActions::renotify.
#include <iostream>

#include "adapters/bank/notification_client.hpp"
#include "adapters/dynamodb/dynamodb_operator_store.hpp"
#include "adapters/dynamodb/dynamodb_store.hpp"
#include "app/bank_wiring.hpp"
#include "app/cli_support.hpp"
#include "app/operator_ports.hpp"
#include "app/system_adapters.hpp"
#include "application/operations/commands.hpp"
#include "http/curl_transport.hpp"

namespace ic::app {
namespace {

struct RenotifyState {
  application::RenotifyRequest request;
  std::string actor;
};

int renotify(AwsStack& aws, const TableSettings& table, const std::string& notification_url,
             const BankAuthSettings& bank_auth, const std::string& actor,
             const application::RenotifyRequest& request) {
  auto endpoint = bank::BankEndpoint::create(notification_url, kBankTimeouts);
  if (!endpoint) return report({"NOTIFICATION_URL: " + endpoint.error()});
  const auto spec = charge_table(table.table, table.retention);
  dynamodb::DynamoDbIdempotencyStore store(aws.dynamodb(), spec);
  dynamodb::DynamoDbOperatorStore operators(aws.dynamodb(), spec);
  auto token = open_token_file("NOTIFICATION_TOKEN_FILE", bank_auth.notification_token_file);
  if (!token) return report(token.error());
  http::CurlTransport transport(bank_auth.bank_tls);
  bank::NotificationClient notifier(transport, *endpoint, token->get());
  RandomTokens tokens;
  application::OperatorActions actions(store, operators, real_clock(), tokens, actor);
  StdConsole console;
  return application::renotify(actions, operators, notifier, console, request);
}

}  // namespace

void add_renotify(CLI::App& app, SettingsSource& settings, int& exit_code) {
  auto state = std::make_shared<RenotifyState>();
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
  auto* id = cmd->add_option("chargeId", state->request.charge_id, "the charge's business key");
  auto* all = cmd->add_flag("--all-failed-notifications", state->request.all_failed_notifications,
                            "every DEBITED_NOTIFICATION_FAILED charge");
  id->excludes(all);
  cmd->add_option("--actor", state->actor, "who, for the audit entry (default: $USER@host)");
  cmd->callback([&settings, &exit_code, state, id, all] {
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
    const std::string actor = actor_or_default(state->actor, settings);
    exit_code = with_aws(settings, [&](AwsStack& aws) {
      return renotify(aws, *table, *url, *bank_auth, actor, state->request);
    });
  });
}

}  // namespace ic::app
