// The operator commands' rules (docs/design.md §5 "Command line"): list the charges that need
// a person, renotify and reopen them (audited, fenced writes), and redrive dead-lettered
// messages. Each returns the process exit code and reports through the Console; it blocks its
// thread, running the asynchronous ports it uses (the notifier, the quarantine) to completion
// with event::run_blocking. The command line and the adapters behind the ports are the
// composition root's (src/app).
//
//   StdConsole console;
//   return application::list(operators, real_clock(), console, {.status = "FAILED"});
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <set>
#include <string>

#include "application/operations/operator_actions.hpp"
#include "application/operations/ports.hpp"
#include "consumer/quarantine.hpp"
#include "core/time.hpp"
#include "domain/ports.hpp"
#include "idempotency/operator_store.hpp"

namespace ic::application {

// Exit codes of the record commands besides 0 and 1 (a store or queue failure).
inline constexpr int kNoRecordExit = 3;
inline constexpr int kRefusedExit = 4;  // wrong state, or the record changed (a race)
inline constexpr int kNotificationFailedExit = 5;
// `list --fail-if-any` listed at least one record: for a scheduled check (the stale-claims
// CronJob), whose failure is what an alert watches.
inline constexpr int kFoundExit = 6;

struct ListRequest {
  std::string status;  // FAILED, DEBITED_NOTIFICATION_FAILED or IN_PROGRESS
  Instant since{};     // attention recorded at or after
  std::chrono::seconds lease{60};
  int older_than_leases = 2;  // IN_PROGRESS: the lease ended longer ago than this many leases
  int scan_limit = 100'000;   // IN_PROGRESS: items the Scan reads at most
  bool fail_if_any = false;   // exit kFoundExit when any record is listed
};
// One JSON line per record (never the kept payload: it holds the full account number), then
// {"event":"listed",...}.
[[nodiscard]] int list(idempotency::OperatorStore& operators, const Clock& clock, Console& console,
                       const ListRequest& request);

struct RenotifyRequest {
  std::string charge_id;  // empty with all_failed_notifications
  bool all_failed_notifications = false;
};
[[nodiscard]] int renotify(OperatorActions& actions, idempotency::OperatorStore& operators,
                           domain::NotificationPort& notifier, Console& console,
                           const RenotifyRequest& request);

struct ReopenRequest {
  std::string charge_id;
  std::string reason;
  bool resend = false;  // send the kept charge to `source` after the reopen
};
[[nodiscard]] int reopen(OperatorActions& actions, SourceQueue& source, Console& console,
                         const ReopenRequest& request);

struct RedriveRequest {
  std::optional<int> max_messages;
  std::set<std::string, std::less<>> reasons;  // failureReasons opted in (`--reason`)
  bool dry_run = false;                        // list what would move; move nothing
};
// `quarantine` (may be null: none consulted) supplies the failureReason of a message that
// carries none but was quarantined by the consumer (docs/design.md §5 "Sizes").
[[nodiscard]] int redrive(DeadLetterQueue& dlq, SourceQueue& source, const Clock& clock,
                          Console& console, const RedriveRequest& request,
                          consumer::QuarantinePort* quarantine = nullptr);

}  // namespace ic::application
