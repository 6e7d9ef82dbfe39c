// The operator subcommands besides `run`: provision, send, status, redrive, list, renotify and
// reopen. Each returns the process exit code and prints its result to stdout (errors to stderr,
// one line each).
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>

#include "app/aws_stack.hpp"
#include "app/settings.hpp"
#include "core/time.hpp"

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
  std::set<std::string, std::less<>> reasons;  // failureReasons opted in (`--reason`)
  bool dry_run = false;                        // list what would move; move nothing
};
[[nodiscard]] int redrive(AwsStack& aws, const RedriveOptions& options);

// Exit codes of the operator's record commands besides 0 and 1 (an AWS failure).
inline constexpr int kNoRecordExit = 3;
inline constexpr int kRefusedExit = 4;  // wrong state, or the record changed (a race)
inline constexpr int kNotificationFailedExit = 5;

struct ListOptions {
  std::string table;
  std::string status;  // FAILED, DEBITED_NOTIFICATION_FAILED or IN_PROGRESS
  Instant since{};     // attention recorded at or after
  std::chrono::seconds lease{60};
  int older_than_leases = 2;  // IN_PROGRESS: the lease ended longer ago than this many leases
  int scan_limit = 100'000;   // IN_PROGRESS: items the Scan reads at most
  std::chrono::seconds retention{30 * 24 * 3600};
};
[[nodiscard]] int list(AwsStack& aws, const ListOptions& options);

struct RenotifyOptions {
  std::string table;
  std::string charge_id;  // empty with all_failed_notifications
  bool all_failed_notifications = false;
  std::string notification_url;
  BankAuthSettings bank_auth;  // its notification token and the TLS files; not the core-banking one
  std::string actor;
  std::chrono::seconds retention{30 * 24 * 3600};
};
[[nodiscard]] int renotify(AwsStack& aws, const RenotifyOptions& options);

struct ReopenOptions {
  std::string table;
  std::string charge_id;
  std::string reason;
  std::string actor;
  bool resend = false;    // send the kept charge to the source queue after the reopen
  std::string queue_url;  // for resend
  std::chrono::seconds retention{30 * 24 * 3600};
};
[[nodiscard]] int reopen(AwsStack& aws, const ReopenOptions& options);

}  // namespace ic::app
