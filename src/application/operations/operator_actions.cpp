#include "application/operations/operator_actions.hpp"

#include <fmt/format.h>

#include <variant>

#include "application/payload_hash.hpp"
#include "domain/charge_status.hpp"
#include "event/run_blocking.hpp"

namespace ic::application {
namespace {

using Kind = OperatorOutcome::Kind;

constexpr std::string_view kNotificationFailed =
    to_string(domain::ChargeStatus::DebitedNotificationFailed);
constexpr std::string_view kUncertain = to_string(domain::ChargeStatus::DebitUncertain);

std::string describe(const idempotency::ClaimRecord& record) {
  std::string out(idempotency::to_string(record.state));
  if (!record.status.empty()) out += fmt::format(" ({})", record.status);
  return out + fmt::format(", fence {}", record.fence);
}

OperatorOutcome store_error(std::string_view step, const Error& error) {
  return {.kind = Kind::StoreError,
          .detail = fmt::format("{}: {} {}", step, error.code, error.message)};
}

// The charge a record kept for its follow-up, checked against the hash the claim recorded.
std::expected<domain::Charge, std::string> kept_charge(const idempotency::ClaimRecord& record) {
  if (record.payload.empty()) return std::unexpected("the record kept no payload");
  auto parsed = domain::parse_canonical_form(record.payload);
  if (!parsed) return std::unexpected("the kept payload is invalid: " + parsed.error().detail());
  if (payload_hash(*parsed) != record.payload_hash) {
    return std::unexpected("the kept payload does not match the record's payloadHash");
  }
  return *parsed;
}

}  // namespace

std::expected<idempotency::ClaimRecord, OperatorOutcome> OperatorActions::read_in(
    std::string_view key, idempotency::ClaimState state, std::string_view status,
    std::string_view action) {
  auto read = event::run_blocking(store_.get(key));
  if (!read) return std::unexpected(store_error("read", read.error()));
  if (!*read) {
    return std::unexpected(
        OperatorOutcome{.kind = Kind::NotFound, .detail = fmt::format("no record for {}", key)});
  }
  if ((*read)->state != state || (*read)->status != status) {
    return std::unexpected(OperatorOutcome{
        .kind = Kind::Refused,
        .detail = fmt::format("refused: {} is {}; only {} ({}) is {}", key, describe(**read),
                              idempotency::to_string(state), status, action)});
  }
  return std::move(**read);
}

std::string OperatorActions::raced(std::string_view key, const idempotency::ClaimRecord& read) {
  auto now = event::run_blocking(store_.get(key));
  const std::string current =
      !now ? "unknown (" + now.error().code + ")" : (*now ? describe(**now) : "gone");
  return fmt::format("refused: {} changed after it was read (read {}, now {}); nothing written",
                     key, describe(read), current);
}

OperatorOutcome OperatorActions::reopen(std::string_view key, std::string_view reason) {
  auto read = event::run_blocking(store_.get(key));
  if (!read) return store_error("read", read.error());
  if (!*read) return {.kind = Kind::NotFound, .detail = fmt::format("no record for {}", key)};
  const idempotency::ClaimRecord& record = **read;
  if (record.state != idempotency::ClaimState::Failed) {
    const bool done = record.state == idempotency::ClaimState::Done;
    return {.kind = Kind::Refused,
            .detail = fmt::format(
                "refused: {} is {}; {}", key, describe(record),
                done ? "a DONE charge is never reopened" : "only a FAILED charge can be reopened")};
  }
  if (record.status == kUncertain) {
    return {.kind = Kind::Refused,
            .detail = fmt::format("refused: {} is {}; an earlier debit may have moved money: "
                                  "resolve it from the bank's ledger with reconcile "
                                  "--resolve-uncertain",
                                  key, describe(record))};
  }
  return write_reopen(key, record, reason);
}

OperatorOutcome OperatorActions::resolve_uncertain(std::string_view key,
                                                   const std::optional<std::string>& debit_ref,
                                                   std::string_view reason) {
  auto read = read_in(key, idempotency::ClaimState::Failed, kUncertain, "resolved");
  if (!read) return std::move(read.error());
  const idempotency::ClaimRecord& record = *read;
  if (!debit_ref) return write_reopen(key, record, reason);
  const idempotency::AuditEntry audit{
      .at = clock_.now(), .actor = actor_, .action = "resolve", .reason = std::string(reason)};
  auto written =
      operators_.settle({.key = std::string(key),
                         .read = idempotency::fence_of(record),
                         .from_status = std::string(kUncertain),
                         .to_status = std::string(to_string(domain::ChargeStatus::Debited)),
                         .result_ref = *debit_ref,
                         .audit = audit});
  if (!written) return store_error("resolve", written.error());
  if (*written == idempotency::OperatorWrite::Refused) {
    return {.kind = Kind::Refused, .detail = raced(key, record)};
  }
  return {.kind = Kind::Written,
          .detail = fmt::format("{}: recorded DEBITED ({})", key, *debit_ref),
          .audit = audit};
}

OperatorOutcome OperatorActions::write_reopen(std::string_view key,
                                              const idempotency::ClaimRecord& record,
                                              std::string_view reason) {
  const std::string token = tokens_.next();
  const idempotency::AuditEntry audit{
      .at = clock_.now(), .actor = actor_, .action = "reopen", .reason = std::string(reason)};
  auto written = operators_.reopen({.key = std::string(key),
                                    .read = idempotency::fence_of(record),
                                    .new_token = token,
                                    .audit = audit});
  if (!written && written.error().ambiguous) {
    // The write may have landed: our fresh token on the record says it did.
    auto after = event::run_blocking(store_.get(key));
    if (after && *after && (*after)->claim_token == token)
      written = idempotency::OperatorWrite::Written;
  }
  if (!written) return store_error("reopen", written.error());
  if (*written == idempotency::OperatorWrite::Refused) {
    return {.kind = Kind::Refused, .detail = raced(key, record)};
  }
  auto kept = kept_charge(record);
  return {.kind = Kind::Written,
          .detail = fmt::format("reopened {}", key),
          .audit = audit,
          .charge = kept ? std::optional(*kept) : std::nullopt};
}

OperatorOutcome OperatorActions::renotify(std::string_view key,
                                          domain::NotificationPort& notifier) {
  auto read = read_in(key, idempotency::ClaimState::Done, kNotificationFailed, "re-notified");
  if (!read) return std::move(read.error());
  const idempotency::ClaimRecord& record = *read;
  auto charge = kept_charge(record);
  if (!charge) {
    return {.kind = Kind::Refused, .detail = fmt::format("refused: {}: {}", key, charge.error())};
  }
  const domain::NotificationResult sent = event::run_blocking(
      notifier.notify(*charge, record.result_ref, charge->id.value() + ":notify"));
  const auto* failed = std::get_if<domain::NotificationFailed>(&sent);
  idempotency::AuditEntry audit{.at = clock_.now(), .actor = actor_, .action = "renotify"};
  audit.reason = failed ? "notification failed again: " + failed->detail : "notification sent";
  auto written = operators_.amend(
      {.key = std::string(key),
       .read = idempotency::fence_of(record),
       .from_status = std::string(kNotificationFailed),
       .to_status = failed ? std::string{} : std::string(to_string(domain::ChargeStatus::Debited)),
       .audit = audit});
  if (!written) return store_error("record the renotify", written.error());
  if (*written == idempotency::OperatorWrite::Refused) {
    return {.kind = Kind::Refused, .detail = raced(key, record)};
  }
  if (failed) {
    return {.kind = Kind::NotificationFailed,
            .detail = fmt::format("{}: {}", key, audit.reason),
            .audit = audit};
  }
  return {.kind = Kind::Written,
          .detail = fmt::format("{}: notification sent, recorded DEBITED", key),
          .audit = audit};
}

}  // namespace ic::application
