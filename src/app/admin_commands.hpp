// The operator subcommands besides `run`: provision, send, status and redrive. Each returns the
// process exit code and prints its result to stdout (errors to stderr, one line each).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "app/aws_stack.hpp"

namespace ic::app {

struct ProvisionOptions {
  std::string table;
  std::string queue_name = "charge-due";
  std::string dlq_name = "charge-due-dlq";
  int max_receive_count = 10;
  int visibility_timeout_seconds = 60;
};
[[nodiscard]] int provision(AwsStack& aws, const ProvisionOptions& options);

struct SendOptions {
  std::string queue_url;
  std::string file;           // JSONL bodies, sent as they are; empty: generate
  int count = 0;              // generated unique charges
  double duplicate_rate = 0;  // extra resends of generated charges, as a fraction of count
  std::uint32_t seed = 1;
  std::string id_prefix = "CHG";
  std::string due_date = "2026-11-30";
};
[[nodiscard]] int send(AwsStack& aws, const SendOptions& options);

struct StatusOptions {
  std::string table;
  std::string charge_id;
  std::chrono::seconds retention{30 * 24 * 3600};
};
[[nodiscard]] int status(AwsStack& aws, const StatusOptions& options);

struct RedriveOptions {
  std::string queue_url;
  std::string dlq_url;
  std::optional<int> max_messages;
};
[[nodiscard]] int redrive(AwsStack& aws, const RedriveOptions& options);

}  // namespace ic::app
