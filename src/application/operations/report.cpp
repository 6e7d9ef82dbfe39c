#include "application/operations/report.hpp"

#include <fmt/format.h>

#include "application/operations/commands.hpp"

namespace ic::application {

std::string iso(Instant t) {
  // By hand: fmt 9 drops the milliseconds of a time point's %T.
  using namespace std::chrono;
  const auto day = floor<days>(t);
  const year_month_day date{day};
  const hh_mm_ss time{t - day};
  return fmt::format("{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z", static_cast<int>(date.year()),
                     static_cast<unsigned>(date.month()), static_cast<unsigned>(date.day()),
                     time.hours().count(), time.minutes().count(), time.seconds().count(),
                     time.subseconds().count());
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
