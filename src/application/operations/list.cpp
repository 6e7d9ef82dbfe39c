// list: the charges that need a person.
#include <fmt/format.h>

#include <algorithm>

#include "application/operations/commands.hpp"
#include "application/operations/report.hpp"

namespace ic::application {
namespace {

constexpr int kScanPageItems = 1000;

// What an operator needs to decide, never the kept payload (it holds the full account number).
nlohmann::json list_line(const idempotency::ClaimRecord& r) {
  nlohmann::json out = {{"chargeId", r.key},
                        {"state", idempotency::to_string(r.state)},
                        {"updatedAt", iso(r.updated_at)}};
  if (!r.status.empty()) out["status"] = r.status;
  if (!r.failure_reason.empty()) out["failureReason"] = r.failure_reason;
  if (!r.result_ref.empty()) out["debitRef"] = r.result_ref;
  if (r.state == idempotency::ClaimState::InProgress) {
    out["leaseUntil"] = iso(r.lease_until);
    out["owner"] = r.owner;
  }
  if (!r.audit.empty()) out["lastAudit"] = audit_json(r.audit.back());
  return out;
}

int list_attention(idempotency::OperatorStore& store, Console& console,
                   const ListRequest& request) {
  std::size_t count = 0;
  std::string cursor;
  do {
    auto page = store.needing_attention(request.status, request.since, cursor);
    if (!page) return store_failure(console, "list", page.error());
    for (const idempotency::ClaimRecord& record : page->records) {
      console.result(list_line(record).dump());
      ++count;
    }
    cursor = page->next;
  } while (!cursor.empty());
  console.result(
      nlohmann::json{{"event", "listed"}, {"status", request.status}, {"count", count}}.dump());
  return 0;
}

// Claims in progress have no index (a healthy claim must not pay an index write), so they are
// found by a Scan: bounded, paginated, and announced.
int list_stale_in_progress(idempotency::OperatorStore& store, const Clock& clock, Console& console,
                           const ListRequest& request) {
  const Instant stale_before = clock.now() - request.lease * request.older_than_leases;
  console.note(
      nlohmann::json{{"event", "warning"},
                     {"detail", fmt::format("IN_PROGRESS is listed by a Scan of the table (no "
                                            "index, by design), reading at most {} items",
                                            request.scan_limit)}}
          .dump());
  std::size_t count = 0;
  int budget = request.scan_limit;
  std::string cursor;
  do {
    auto page = store.stale_in_progress(stale_before, cursor, std::min(kScanPageItems, budget));
    if (!page) return store_failure(console, "list", page.error());
    budget -= std::min(kScanPageItems, budget);
    for (const idempotency::ClaimRecord& record : page->records) {
      console.result(list_line(record).dump());
      ++count;
    }
    cursor = page->next;
  } while (!cursor.empty() && budget > 0);
  if (!cursor.empty()) {
    console.note(nlohmann::json{{"event", "warning"},
                                {"detail", fmt::format("the Scan stopped at --scan-limit {}; "
                                                       "there may be more",
                                                       request.scan_limit)}}
                     .dump());
  }
  console.result(nlohmann::json{{"event", "listed"},
                                {"status", request.status},
                                {"count", count},
                                {"complete", cursor.empty()}}
                     .dump());
  return 0;
}

}  // namespace

int list(idempotency::OperatorStore& operators, const Clock& clock, Console& console,
         const ListRequest& request) {
  if (request.status == idempotency::to_string(idempotency::ClaimState::InProgress)) {
    return list_stale_in_progress(operators, clock, console, request);
  }
  return list_attention(operators, console, request);
}

}  // namespace ic::application
