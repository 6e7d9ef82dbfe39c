// The bank's idempotency window (docs/design.md §3, "The bank's memory of keys"): a debit that an
// earlier attempt may have made is sent again only while the bank still remembers its key, and
// asked about first when the bank can be asked.
//
//   BankHorizon horizon{.window = 24h, .inquiry = &core_banking};
//   if (past_window(horizon, record.first_attempt_at, clock.now())) { /* DEBIT_UNCERTAIN */ }
#pragma once

#include <chrono>
#include <optional>

#include "core/time.hpp"
#include "domain/ports.hpp"

namespace ic::application {

struct BankHorizon {
  // How long the bank remembers a key (BANK_IDEMPOTENCY_WINDOW); nullopt: for ever ("none").
  std::optional<Millis> window = std::chrono::hours(24);
  // Asked before a debit an earlier attempt may have made (BANK_STATUS_INQUIRY); null: never.
  // Borrowed; must outlive the service.
  domain::DebitInquiryPort* inquiry = nullptr;
};

// What is kept back from the window: a tenth of it, for the time between the check and the POST
// reaching the bank (the pacer's queue, the call itself) and for clocks.
[[nodiscard]] Millis safety_margin(const BankHorizon& horizon);

// Whether a debit first attempted at `first_attempt` may no longer be sent again at `now`: the
// bank may have forgotten the key by the time a new POST reaches it. Never with no window.
[[nodiscard]] bool past_window(const BankHorizon& horizon, Instant first_attempt, Instant now);

}  // namespace ic::application
