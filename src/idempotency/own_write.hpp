// A retried final write that finds its own earlier success (docs/design.md §3): when complete or
// fail took effect but its response was lost, the retry's condition fails on a record that is
// already final. Shared by every store, so that all of them tell this from fencing alike.
#pragma once

#include <string_view>

#include "idempotency/claim_record.hpp"

namespace ic::idempotency {

// True when `existing` is final with our token and exactly the state and status we are writing:
// the retry counts as written, not fenced. Any other holder's outcome is fencing.
[[nodiscard]] inline bool is_own_final_write(const ClaimRecord& existing, std::string_view token,
                                             ClaimState state, std::string_view status) {
  return existing.state == state && existing.claim_token == token && existing.status == status;
}

}  // namespace ic::idempotency
