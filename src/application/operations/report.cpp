#include "application/operations/report.hpp"

#include <fmt/chrono.h>
#include <fmt/format.h>

#include "application/operations/commands.hpp"

namespace ic::application {

std::string iso(Instant t) {
  return fmt::format("{:%FT%TZ}", std::chrono::floor<std::chrono::seconds>(t));
}

nlohmann::json audit_json(const idempotency::AuditEntry& entry) {
  return {{"at", iso(entry.at)},
          {"actor", entry.actor},
          {"action", entry.action},
          {"reason", entry.reason}};
}

int store_failure(Console& console, std::string_view command, const Error& error) {
  console.note(fmt::format("{}: {} {}", command, error.code, error.message));
  return 1;
}

int report_outcome(Console& console, std::string_view command, const OperatorOutcome& outcome,
                   std::string_view key) {
  using Kind = OperatorOutcome::Kind;
  const std::string note = fmt::format("{}: {}", command, outcome.detail);
  switch (outcome.kind) {
    case Kind::Written:
    case Kind::NotificationFailed:
      console.result(nlohmann::json{
          {"event", command},
          {"chargeId", key},
          {"result", outcome.kind == Kind::Written ? "written" : "notification_failed"},
          {"audit", audit_json(outcome.audit)}}
                         .dump());
      if (outcome.kind == Kind::NotificationFailed) {
        console.note(note);
        return kNotificationFailedExit;
      }
      return 0;
    case Kind::Refused:
      console.note(note);
      return kRefusedExit;
    case Kind::NotFound:
      console.note(note);
      return kNoRecordExit;
    case Kind::StoreError:
      console.note(note);
      return 1;
  }
  return 1;
}

}  // namespace ic::application
