// reconcile: the rules. Key-driven checks batch the ledger's keys into get_many calls; the
// records the ledger never names come from debited_between after the ledger has been read.
#include "application/operations/reconcile.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <unordered_map>
#include <unordered_set>

#include "application/operations/commands.hpp"
#include "application/operations/report.hpp"
#include "domain/charge.hpp"

namespace ic::application {
namespace {

using idempotency::ClaimRecord;
using idempotency::ClaimState;

constexpr std::array<std::string_view, 5> kKinds = {"DEBITED_NOT_RECORDED", "RECORDED_NOT_DEBITED",
                                                    "AMOUNT_MISMATCH", "DEBIT_REF_MISMATCH",
                                                    "DUPLICATE_DEBIT"};
constexpr int kScanPageItems = 1000;

// FNV-1a, 64 bits: 8 bytes per distinct key instead of the key itself. Two keys of one
// 2M-row day share a hash with probability ~1e-7 (docs/design.md "reconcile").
std::uint64_t key_hash(std::string_view key) {
  std::uint64_t h = 14695981039346656037ULL;
  for (const char c : key) {
    h ^= static_cast<unsigned char>(c);
    h *= 1099511628211ULL;
  }
  return h;
}

std::string mask(std::string_view account) {
  auto parsed = domain::AccountId::parse(account);
  return parsed ? domain::masked(*parsed) : std::string(account.size(), '*');
}

bool debited(const ClaimRecord& r) {
  return r.state == ClaimState::Done &&
         (r.status == "DEBITED" || r.status == "DEBITED_NOTIFICATION_FAILED");
}

nlohmann::json table_json(const ClaimRecord* r, const std::optional<domain::Charge>& charge) {
  if (r == nullptr) return nlohmann::json::object();
  nlohmann::json out = {{"state", idempotency::to_string(r->state)}};
  if (!r->status.empty()) out["status"] = r->status;
  if (!r->failure_reason.empty()) out["failureReason"] = r->failure_reason;
  if (!r->result_ref.empty()) out["debitRef"] = r->result_ref;
  if (r->completed_at) out["completedAt"] = iso(*r->completed_at);
  if (r->state == ClaimState::InProgress) out["leaseUntil"] = iso(r->lease_until);
  if (charge) {
    out["accountId"] = domain::masked(charge->account);
    out["amountMinor"] = charge->amount.amount_minor();
    out["currency"] = charge->amount.currency().code();
  }
  return out;
}

nlohmann::json bank_json(const LedgerRow* row) {
  if (row == nullptr) return nlohmann::json::object();
  return {{"debitId", row->debit_id},         {"accountId", mask(row->account_id)},
          {"amountMinor", row->amount_minor}, {"currency", row->currency},
          {"postedAt", iso(row->posted_at)},  {"line", row->line}};
}

class Reconciler {
 public:
  Reconciler(RecordSource& records, Console& console, const ReconcileRequest& request)
      : records_(records), console_(console), request_(request) {}

  // Returns an exit code when the run must stop.
  std::optional<int> read_ledger(LedgerSource& ledger) {
    for (;;) {
      auto row = ledger.next();
      if (!row) {
        const LedgerError& e = row.error();
        console_.note(e.column.empty() ? fmt::format("reconcile: line {}: {}", e.line, e.message)
                                       : fmt::format("reconcile: line {}, column {}: {}", e.line,
                                                     e.column, e.message));
        return kInputErrorExit;
      }
      if (!*row) break;
      add(std::move(**row));
      if (pending_.size() == kMaxBatchKeys) {
        if (auto failed = flush()) return failed;
        if (request_.progress) request_.progress(rows_);
      }
    }
    return flush();
  }

  std::optional<int> find_unposted() {
    const auto [since, until] = window();
    int budget = request_.scan_limit;
    std::string cursor;
    do {
      const int page_items = std::min(kScanPageItems, budget);
      auto page = records_.debited_between(since, until, request_.full_scan, cursor, page_items);
      if (!page) return store_failure(console_, "reconcile", page.error());
      budget -= page_items;
      for (const ClaimRecord& r : page->records) {
        if (!debited(r) || !r.completed_at || *r.completed_at < since || *r.completed_at > until)
          continue;
        if (seen_.contains(key_hash(r.key))) continue;
        ++records_read_;
        report("RECORDED_NOT_DEBITED", r.key, &r, nullptr);
      }
      cursor = page->next;
    } while (!cursor.empty() && budget > 0);
    if (!cursor.empty()) {
      console_.note(
          fmt::format("reconcile: the Scan stopped at --scan-limit {}; there may be "
                      "more RECORDED_NOT_DEBITED",
                      request_.scan_limit));
    }
    return std::nullopt;
  }

  int summarise() {
    const auto [since, until] = window();
    nlohmann::json kinds = nlohmann::json::object();
    std::size_t total = 0;
    for (const std::string_view kind : kKinds) {
      kinds[std::string(kind)] = counts_[std::string(kind)];
      total += counts_[std::string(kind)];
    }
    if (request_.text) {
      console_.result(
          fmt::format("reconciled {} ledger rows against {} records from {} to {}: {} matched, {} "
                      "discrepancies {}",
                      rows_, records_read_, iso(since), iso(until), matched_, total, kinds.dump()));
    } else {
      console_.result(nlohmann::json{{"event", "reconciled"},
                                     {"ledgerRows", rows_},
                                     {"records", records_read_},
                                     {"matched", matched_},
                                     {"discrepancies", kinds},
                                     {"since", iso(since)},
                                     {"until", iso(until)},
                                     {"fullScan", request_.full_scan}}
                          .dump());
    }
    return total == 0 ? 0 : kFoundExit;
  }

 private:
  struct Pending {
    LedgerRow row;
    bool repeated = false;  // not the key's first row
  };

  void add(LedgerRow row) {
    ++rows_;
    first_posted_ = std::min(first_posted_.value_or(row.posted_at), row.posted_at);
    last_posted_ = std::max(last_posted_.value_or(row.posted_at), row.posted_at);
    const bool repeated = !seen_.insert(key_hash(row.idempotency_key)).second;
    pending_.push_back({.row = std::move(row), .repeated = repeated});
  }

  std::optional<int> flush() {
    if (pending_.empty()) return std::nullopt;
    std::vector<std::string> keys;
    for (const Pending& p : pending_) {
      if (std::ranges::find(keys, p.row.idempotency_key) == keys.end())
        keys.push_back(p.row.idempotency_key);
    }
    auto found = records_.get_many(keys);
    if (!found) return store_failure(console_, "reconcile", found.error());
    std::unordered_map<std::string, const ClaimRecord*> by_key;
    for (const ClaimRecord& r : *found) by_key.emplace(r.key, &r);
    records_read_ += by_key.size();
    for (const Pending& p : pending_) {
      auto it = by_key.find(p.row.idempotency_key);
      check(p, it == by_key.end() ? nullptr : it->second);
    }
    pending_.clear();
    return std::nullopt;
  }

  void check(const Pending& p, const ClaimRecord* r) {
    const LedgerRow& row = p.row;
    if (p.repeated) {
      report("DUPLICATE_DEBIT", row.idempotency_key, r, &row);
      return;
    }
    if (r == nullptr || !debited(*r)) {
      report("DEBITED_NOT_RECORDED", row.idempotency_key, r, &row);
      return;
    }
    bool clean = true;
    // A record keeps its charge from its DONE write (docs/design.md §3 `payload`); one written
    // before that, or amended by renotify, cannot be compared and counts as matched.
    if (auto charge = kept_charge(*r);
        charge && (charge->account.value() != row.account_id ||
                   charge->amount.amount_minor() != row.amount_minor ||
                   charge->amount.currency().code() != row.currency)) {
      report("AMOUNT_MISMATCH", row.idempotency_key, r, &row);
      clean = false;
    }
    if (r->result_ref != row.debit_id) {
      report("DEBIT_REF_MISMATCH", row.idempotency_key, r, &row);
      clean = false;
    }
    if (clean) ++matched_;
  }

  static std::optional<domain::Charge> kept_charge(const ClaimRecord& r) {
    if (r.payload.empty()) return std::nullopt;
    auto charge = domain::parse_canonical_form(r.payload);
    if (!charge) return std::nullopt;
    return std::move(*charge);
  }

  void report(std::string_view kind, std::string_view key, const ClaimRecord* r,
              const LedgerRow* row) {
    ++counts_[std::string(kind)];
    const auto charge = r == nullptr ? std::nullopt : kept_charge(*r);
    std::string line;
    if (request_.text) {
      line = fmt::format("{} {} table={} bank={}", kind, key, table_json(r, charge).dump(),
                         bank_json(row).dump());
    } else {
      line = nlohmann::json{{"kind", kind},
                            {"chargeId", key},
                            {"table", table_json(r, charge)},
                            {"bank", bank_json(row)}}
                 .dump();
    }
    console_.result(line);
  }

  std::pair<Instant, Instant> window() const {
    const Instant since =
        request_.since.value_or(first_posted_ ? *first_posted_ - request_.lease : Instant{});
    const Instant until =
        request_.until.value_or(last_posted_ ? *last_posted_ + request_.lease : Instant{});
    return {since, until};
  }

  RecordSource& records_;
  Console& console_;
  const ReconcileRequest& request_;
  std::unordered_set<std::uint64_t> seen_;
  std::vector<Pending> pending_;
  std::map<std::string, std::size_t, std::less<>> counts_;
  std::optional<Instant> first_posted_;
  std::optional<Instant> last_posted_;
  std::size_t rows_ = 0;
  std::size_t records_read_ = 0;
  std::size_t matched_ = 0;
};

}  // namespace

int reconcile(LedgerSource& ledger, RecordSource& records, Console& console,
              const ReconcileRequest& request) {
  Reconciler run(records, console, request);
  if (auto stopped = run.read_ledger(ledger)) return *stopped;
  if (auto stopped = run.find_unposted()) return *stopped;
  return run.summarise();
}

}  // namespace ic::application
