// provision: the table (with TTL) and both queues with the redrive policy. Every step accepts
// "already there", so running it twice is safe.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "adapters/dynamodb/dynamodb_codec.hpp"
#include "adapters/dynamodb/table_provisioner.hpp"
#include "adapters/sqs/sqs_codec.hpp"
#include "app/cli_support.hpp"
#include "event/run_blocking.hpp"

namespace ic::app {
namespace {

struct ProvisionOptions {
  std::string table;
  std::string queue_name = "charge-due";
  std::string dlq_name = "charge-due-dlq";
  int max_receive_count = 10;
  int visibility_timeout_seconds = 60;
};

constexpr std::string_view kFourteenDays = "1209600";  // SQS's longest retention

// CreateQueue answers with the existing URL when attributes match; when they differ (an older
// lease, another redrive count) the queue is looked up and its attributes brought in line.
std::expected<std::string, Error> ensure_queue(sqs::SqsClient& client, const std::string& name,
                                               const sqs::QueueAttributes& attributes) {
  auto created = event::run_blocking(client.create_queue(name, attributes));
  const bool exists_with_other_attributes =
      !created && (created.error().code.find("QueueAlreadyExists") != std::string::npos ||
                   created.error().code.find("QueueNameExists") != std::string::npos);
  if (!exists_with_other_attributes) return created;
  auto url = event::run_blocking(client.get_queue_url(name));
  if (!url) return url;
  auto updated = event::run_blocking(client.set_queue_attributes(*url, attributes));
  if (!updated) return std::unexpected(updated.error());
  return url;
}

int fail(std::string_view step, std::string_view code, std::string_view message) {
  std::cerr << fmt::format("provision: {} failed: {} {}\n", step, code, message);
  return 1;
}

int provision(AwsStack& aws, const ProvisionOptions& options) {
  auto table = dynamodb::provision_table(aws.dynamodb(), options.table, {});
  if (!table) return fail("table " + options.table, table.error().code, table.error().message);

  if (!table->attention_index) {
    std::cerr << fmt::format(
        "provision: table {} has no {} (created before it existed); `list` needs it: see "
        "docs/design.md §3 for the aws dynamodb update-table command\n",
        options.table, dynamodb::kAttentionIndex);
  }

  sqs::SqsClient& client = aws.sqs();
  auto dlq = ensure_queue(client, options.dlq_name,
                          {{"MessageRetentionPeriod", std::string(kFourteenDays)}});
  if (!dlq) return fail("queue " + options.dlq_name, dlq.error().code, dlq.error().message);
  auto dlq_attributes = event::run_blocking(client.get_queue_attributes(*dlq, {"QueueArn"}));
  if (!dlq_attributes || !dlq_attributes->contains("QueueArn")) {
    return fail("QueueArn of " + options.dlq_name,
                dlq_attributes ? "missing" : dlq_attributes.error().code, "");
  }
  auto queue = ensure_queue(
      client, options.queue_name,
      {{"VisibilityTimeout", std::to_string(options.visibility_timeout_seconds)},
       {"MessageRetentionPeriod", std::string(kFourteenDays)},
       {"RedrivePolicy",
        sqs::redrive_policy(dlq_attributes->at("QueueArn"), options.max_receive_count)}});
  if (!queue) return fail("queue " + options.queue_name, queue.error().code, queue.error().message);

  if (!table->ttl_enabled) {
    // Emulators such as dynalite have no UpdateTimeToLive: the stack still works, but nothing
    // expires, so say so once instead of failing.
    std::cerr << nlohmann::json{{"level", "warn"},
                                {"event", "provision_skipped"},
                                {"step", "UpdateTimeToLive"},
                                {"table", options.table},
                                {"reason",
                                 "the endpoint does not support TTL: records never expire"}}
                     .dump()
              << "\n";
  }
  // Shell-friendly: `eval "$(charge-recovery provision ...)"` sets what `run` needs.
  std::cout << "IDEMPOTENCY_TABLE=" << options.table << "\n"
            << "CHARGE_QUEUE_URL=" << *queue << "\n"
            << "CHARGE_DLQ_URL=" << *dlq << "\n";
  std::cerr << nlohmann::json{{"event", "provisioned"},
                              {"table", options.table},
                              {"tableCreated", table->created},
                              {"ttlEnabled", table->ttl_enabled},
                              {"attentionIndex", table->attention_index},
                              {"queueUrl", *queue},
                              {"dlqUrl", *dlq},
                              {"maxReceiveCount", options.max_receive_count}}
                   .dump()
            << "\n";
  return 0;
}

}  // namespace

void add_provision(CLI::App& app, SettingsSource& settings, int& exit_code) {
  auto options = std::make_shared<ProvisionOptions>();
  auto* cmd = app.add_subcommand("provision",
                                 "Create the idempotency table (TTL on expiresAt) and both queues "
                                 "with the redrive policy; safe to run twice");
  describe(*cmd,
           "Prints IDEMPOTENCY_TABLE=, CHARGE_QUEUE_URL= and CHARGE_DLQ_URL= lines.\nExample:\n"
           "  eval \"$(AWS_ENDPOINT_URL=http://127.0.0.1:5000 charge-recovery provision "
           "--table charge-idempotency)\"");
  settings.add_flags(*cmd, kAwsSettings);
  settings.add_flags(*cmd, {"IDEMPOTENCY_TABLE", "LEASE_SECONDS"});
  cmd->add_option("--queue-name", options->queue_name, "source queue name")->capture_default_str();
  cmd->add_option("--dlq-name", options->dlq_name, "dead-letter queue name")->capture_default_str();
  cmd->add_option("--max-receive-count", options->max_receive_count,
                  "receives before SQS moves a message to the DLQ")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  cmd->callback([&settings, &exit_code, options] {
    auto table = settings.required("IDEMPOTENCY_TABLE");
    auto lease = lease_setting(settings);
    if (!table || !lease) {
      exit_code = report(!table ? table.error() : lease.error());
      return;
    }
    options->table = *table;
    options->visibility_timeout_seconds = static_cast<int>(lease->count());
    exit_code = with_aws(settings, [&](AwsStack& aws) { return provision(aws, *options); });
  });
}

}  // namespace ic::app
