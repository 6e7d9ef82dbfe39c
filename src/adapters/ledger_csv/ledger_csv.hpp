// The bank's debit-ledger export as application::LedgerSource (docs/design.md §5 "reconcile"):
// CSV per RFC 4180 with a header row naming at least idempotencyKey, debitId, accountId,
// amountMinor, currency and postedAt, in any order; other columns are ignored. Streams: one
// record in memory at a time, each field at most kMaxFieldBytes.
//
//   std::ifstream file(path);
//   ledger_csv::LedgerCsv ledger(file);
//   while (auto row = ledger.next(); row && *row) { ... }
#pragma once

#include <array>
#include <cstddef>
#include <expected>
#include <istream>
#include <optional>
#include <string>
#include <vector>

#include "application/operations/reconcile.hpp"

namespace ic::ledger_csv {

inline constexpr std::size_t kMaxFieldBytes = 4096;

// Thread-safety: one reader. Ownership: borrows the stream, which must outlive it.
class LedgerCsv final : public application::LedgerSource {
 public:
  explicit LedgerCsv(std::istream& in) : in_(in) {}
  // A malformed header or row is an error naming its line (the record's first) and column;
  // the reader stops there (every later call repeats it).
  [[nodiscard]] std::expected<std::optional<application::LedgerRow>, application::LedgerError>
  next() override;

 private:
  // One record's fields; false at the end of the input.
  [[nodiscard]] std::expected<bool, application::LedgerError> read_record();
  [[nodiscard]] std::expected<void, application::LedgerError> read_header();

  std::istream& in_;
  std::size_t line_ = 1;         // the physical line the reader is on
  std::size_t record_line_ = 0;  // the line the current record started on
  std::vector<std::string> fields_;
  std::optional<std::array<std::size_t, 6>> columns_;  // header positions of the six columns
  std::size_t header_width_ = 0;
  std::optional<application::LedgerError> failed_;
};

}  // namespace ic::ledger_csv
