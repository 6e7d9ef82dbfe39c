// reopen: a FAILED charge may be attempted again; with --resend its kept copy is sent.
#include <fmt/format.h>

#include "application/charge_event_decoder.hpp"
#include "application/operations/commands.hpp"
#include "application/operations/report.hpp"

namespace ic::application {
namespace {

// The ChargeDueEvent v1 of the kept charge (docs/design.md §5).
std::string event_body(const domain::Charge& c) {
  return nlohmann::json{{"schemaVersion", kSchemaVersion},
                        {kChargeIdField, c.id.value()},
                        {"accountId", c.account.value()},
                        {"chargeType", c.type.value()},
                        {"amountMinor", c.amount.amount_minor()},
                        {"currency", c.amount.currency().code()},
                        {"dueDate", c.due.iso()}}
      .dump();
}

}  // namespace

int reopen(OperatorActions& actions, SourceQueue& source, Console& console,
           const ReopenRequest& request) {
  const OperatorOutcome outcome = actions.reopen(request.charge_id, request.reason);
  const int code = report_outcome(console, "reopen", outcome, request.charge_id);
  if (code != 0) return code;
  // Only now, after the reopen: a copy sent before it would be dead-lettered again as
  // PREVIOUSLY_FAILED (docs/model-check.md, "what the extended model found").
  if (!request.resend) {
    console.note(fmt::format(
        "reopen: now redrive its DLQ copies (charge-recovery redrive --reason "
        "PERMANENT_DEBIT_FAILURE --reason PREVIOUSLY_FAILED) or re-send it, and check `status "
        "{}` until it is final",
        request.charge_id));
    return 0;
  }
  if (!outcome.charge) {
    console.note("reopen: --resend: the record kept no payload; redrive its DLQ copies instead");
    return 1;
  }
  auto sent = source.send(event_body(*outcome.charge), {});
  if (!sent) {
    console.note(
        fmt::format("reopen: reopened, but --resend failed ({} {}); redrive its DLQ copies instead",
                    sent.error().code, sent.error().message));
    return 1;
  }
  console.result(
      nlohmann::json{{"event", "resent"}, {"chargeId", request.charge_id}, {"messageId", *sent}}
          .dump());
  return 0;
}

}  // namespace ic::application
