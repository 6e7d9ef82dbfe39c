#include "adapters/ledger_csv/ledger_csv.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <chrono>

namespace ic::ledger_csv {
namespace {

using application::LedgerError;
using application::LedgerRow;

constexpr std::array<std::string_view, 6> kColumns = {"idempotencyKey", "debitId",  "accountId",
                                                      "amountMinor",    "currency", "postedAt"};
enum Column : std::size_t { kKey, kDebitId, kAccount, kAmount, kCurrency, kPostedAt };

bool digits(std::string_view text) {
  return !text.empty() && std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; });
}

int number(std::string_view text) {
  int value = 0;
  std::from_chars(text.data(), text.data() + text.size(), value);
  return value;
}

// YYYY-MM-DDTHH:MM:SS[.fff…]Z: UTC only, as the export's contract says.
std::optional<Instant> parse_posted_at(std::string_view t) {
  if (t.size() < 20 || t.back() != 'Z' || t[4] != '-' || t[7] != '-' || t[10] != 'T' ||
      t[13] != ':' || t[16] != ':') {
    return std::nullopt;
  }
  for (const std::size_t at : {0U, 5U, 8U, 11U, 14U, 17U}) {
    if (!digits(t.substr(at, at == 0 ? 4 : 2))) return std::nullopt;
  }
  int millis = 0;
  if (const std::string_view rest = t.substr(19, t.size() - 20); !rest.empty()) {
    if (rest.front() != '.' || !digits(rest.substr(1))) return std::nullopt;
    const std::string_view fraction = rest.substr(1, 3);
    millis = number(fraction) * (fraction.size() == 1 ? 100 : fraction.size() == 2 ? 10 : 1);
  }
  using namespace std::chrono;
  const year_month_day date{year{number(t.substr(0, 4))},
                            month{static_cast<unsigned>(number(t.substr(5, 2)))},
                            day{static_cast<unsigned>(number(t.substr(8, 2)))}};
  const int h = number(t.substr(11, 2)), m = number(t.substr(14, 2)), s = number(t.substr(17, 2));
  if (!date.ok() || h > 23 || m > 59 || s > 59) return std::nullopt;
  return sys_days{date} + hours{h} + minutes{m} + seconds{s} + Millis{millis};
}

bool is_currency(std::string_view text) {
  return text.size() == 3 && std::ranges::all_of(text, [](char c) { return c >= 'A' && c <= 'Z'; });
}

}  // namespace

std::expected<bool, LedgerError> LedgerCsv::read_record() {
  fields_.clear();
  std::streambuf& in = *in_.rdbuf();
  if (in.sgetc() == std::char_traits<char>::eof()) return false;
  record_line_ = line_;
  std::string field;
  bool quoted = false;      // inside a quoted field
  bool was_quoted = false;  // the field began with a quote
  auto end_field = [&]() -> std::expected<void, LedgerError> {
    fields_.push_back(std::move(field));
    field.clear();
    was_quoted = false;
    return {};
  };
  for (;;) {
    const int c = in.sbumpc();
    if (c == std::char_traits<char>::eof()) {
      if (quoted) return std::unexpected(LedgerError{record_line_, "", "unclosed quoted field"});
      (void)end_field();
      return true;
    }
    if (field.size() >= kMaxFieldBytes) {
      return std::unexpected(
          LedgerError{record_line_, fmt::format("{}", fields_.size() + 1),
                      fmt::format("field longer than {} bytes", kMaxFieldBytes)});
    }
    const char ch = static_cast<char>(c);
    if (quoted) {
      if (ch == '"') {
        if (in.sgetc() == '"') {
          in.sbumpc();
          field.push_back('"');
        } else {
          quoted = false;
        }
      } else {
        if (ch == '\n') ++line_;
        field.push_back(ch);
      }
      continue;
    }
    switch (ch) {
      case '"':
        if (!field.empty() || was_quoted) {
          return std::unexpected(LedgerError{record_line_, fmt::format("{}", fields_.size() + 1),
                                             "a quote inside an unquoted field"});
        }
        quoted = was_quoted = true;
        break;
      case ',':
        (void)end_field();
        break;
      case '\r':
        if (in.sgetc() != '\n') field.push_back(ch);
        break;
      case '\n':
        ++line_;
        (void)end_field();
        return true;
      default:
        if (was_quoted) {
          return std::unexpected(LedgerError{record_line_, fmt::format("{}", fields_.size() + 1),
                                             "text after a closing quote"});
        }
        field.push_back(ch);
    }
  }
}

std::expected<void, LedgerError> LedgerCsv::read_header() {
  auto read = read_record();
  if (!read) return std::unexpected(read.error());
  if (!*read) return std::unexpected(LedgerError{1, "", "no header row"});
  std::array<std::size_t, 6> at{};
  for (std::size_t c = 0; c < kColumns.size(); ++c) {
    auto it = std::ranges::find(fields_, kColumns[c]);
    if (it == fields_.end()) {
      return std::unexpected(
          LedgerError{record_line_, std::string(kColumns[c]), "missing from the header"});
    }
    at[c] = static_cast<std::size_t>(it - fields_.begin());
  }
  columns_ = at;
  header_width_ = fields_.size();
  return {};
}

std::expected<std::optional<LedgerRow>, LedgerError> LedgerCsv::next() {
  if (failed_) return std::unexpected(*failed_);
  auto fail = [&](LedgerError error) {
    failed_ = error;
    return std::unexpected(std::move(error));
  };
  if (!columns_) {
    if (auto header = read_header(); !header) return fail(header.error());
  }
  for (;;) {
    auto read = read_record();
    if (!read) return fail(read.error());
    if (!*read) return std::nullopt;
    if (fields_.size() == 1 && fields_[0].empty()) continue;  // a blank line
    if (fields_.size() != header_width_) {
      return fail(
          {record_line_, "",
           fmt::format("{} fields where the header has {}", fields_.size(), header_width_)});
    }
    break;
  }
  const auto& at = *columns_;
  auto column = [&](Column c) -> std::string& { return fields_[at[c]]; };
  auto bad = [&](Column c, std::string_view rule) {
    return fail({record_line_, std::string(kColumns[c]), std::string(rule)});
  };
  LedgerRow row{.line = record_line_};
  if (column(kKey).empty()) return bad(kKey, "must not be empty");
  if (column(kDebitId).empty()) return bad(kDebitId, "must not be empty");
  if (column(kAccount).empty()) return bad(kAccount, "must not be empty");
  const std::string& amount = column(kAmount);
  if (!digits(amount) || amount.size() > 15 ||
      std::from_chars(amount.data(), amount.data() + amount.size(), row.amount_minor).ec !=
          std::errc{}) {
    return bad(kAmount, "must be a whole number of minor units");
  }
  if (!is_currency(column(kCurrency))) return bad(kCurrency, "must be an ISO 4217 code");
  auto posted = parse_posted_at(column(kPostedAt));
  if (!posted) return bad(kPostedAt, "must be ISO-8601 UTC, YYYY-MM-DDTHH:MM:SS[.fff]Z");
  row.posted_at = *posted;
  row.idempotency_key = std::move(column(kKey));
  row.debit_id = std::move(column(kDebitId));
  row.account_id = std::move(column(kAccount));
  row.currency = std::move(column(kCurrency));
  return row;
}

}  // namespace ic::ledger_csv
