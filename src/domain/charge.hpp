// The FinEdge charge: validated value types. Construction goes through parse(), so a Charge
// that exists is valid by construction (docs/design.md §5 rules).
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <string>
#include <string_view>

#include "domain/validation_error.hpp"

namespace ic::domain {

// A string drawn from a fixed alphabet with bounded length; Rules supplies field, bounds and
// alphabet so each identifier is its own type without repeating the checks.
template <class Rules>
class BoundedText {
 public:
  [[nodiscard]] static std::expected<BoundedText, ValidationError> parse(std::string_view text) {
    if (text.size() < Rules::kMinLength || text.size() > Rules::kMaxLength) {
      return std::unexpected(ValidationError{std::string(Rules::kField), Rules::rule()});
    }
    for (char c : text) {
      if (!Rules::allowed(c)) {
        return std::unexpected(ValidationError{std::string(Rules::kField), Rules::rule()});
      }
    }
    return BoundedText(std::string(text));
  }
  [[nodiscard]] const std::string& value() const { return value_; }
  friend bool operator==(const BoundedText&, const BoundedText&) = default;

 private:
  explicit BoundedText(std::string value) : value_(std::move(value)) {}
  std::string value_;
};

namespace rules {
bool is_identifier_char(char c);  // [A-Za-z0-9._:-]
bool is_upper_code_char(char c);  // [A-Z0-9_]

struct ChargeIdRules {
  static constexpr std::string_view kField = "chargeId";
  static constexpr std::size_t kMinLength = 1, kMaxLength = 128;
  static bool allowed(char c) { return is_identifier_char(c); }
  static std::string rule() { return "must be 1-128 characters of [A-Za-z0-9._:-]"; }
};
struct AccountIdRules {
  static constexpr std::string_view kField = "accountId";
  static constexpr std::size_t kMinLength = 1, kMaxLength = 64;
  static bool allowed(char c) { return is_identifier_char(c); }
  static std::string rule() { return "must be 1-64 characters of [A-Za-z0-9._:-]"; }
};
struct ChargeTypeRules {
  static constexpr std::string_view kField = "chargeType";
  static constexpr std::size_t kMinLength = 1, kMaxLength = 64;
  static bool allowed(char c) { return is_upper_code_char(c); }
  static std::string rule() { return "must be 1-64 characters of [A-Z0-9_]"; }
};
}  // namespace rules

using ChargeId = BoundedText<rules::ChargeIdRules>;
using AccountId = BoundedText<rules::AccountIdRules>;
using ChargeType = BoundedText<rules::ChargeTypeRules>;

// An ISO 4217 alphabetic code in current use.
class Currency {
 public:
  [[nodiscard]] static std::expected<Currency, ValidationError> parse(std::string_view code);
  [[nodiscard]] const std::string& code() const { return code_; }
  friend bool operator==(const Currency&, const Currency&) = default;

 private:
  explicit Currency(std::string code) : code_(std::move(code)) {}
  std::string code_;
};

// Integer minor units only: money never passes through a floating-point type.
class Money {
 public:
  static constexpr std::int64_t kMaxMinor = 1'000'000'000'000;
  [[nodiscard]] static std::expected<Money, ValidationError> of(std::int64_t amount_minor,
                                                                Currency currency);
  [[nodiscard]] std::int64_t amount_minor() const { return amount_minor_; }
  [[nodiscard]] const Currency& currency() const { return currency_; }
  friend bool operator==(const Money&, const Money&) = default;

 private:
  Money(std::int64_t amount_minor, Currency currency)
      : amount_minor_(amount_minor), currency_(std::move(currency)) {}
  std::int64_t amount_minor_;
  Currency currency_;
};

// A calendar date written YYYY-MM-DD.
class DueDate {
 public:
  [[nodiscard]] static std::expected<DueDate, ValidationError> parse(std::string_view iso_date);
  [[nodiscard]] std::chrono::year_month_day date() const { return date_; }
  [[nodiscard]] std::string iso() const;
  friend bool operator==(const DueDate&, const DueDate&) = default;

 private:
  explicit DueDate(std::chrono::year_month_day date) : date_(date) {}
  std::chrono::year_month_day date_;
};

struct Charge {
  ChargeId id;
  AccountId account;
  ChargeType type;
  Money amount;
  DueDate due;
  friend bool operator==(const Charge&, const Charge&) = default;
};

// The canonical form the payload hash is computed over (docs/design.md §5):
// v1|chargeId|accountId|chargeType|amountMinor|currency|dueDate. No field can contain '|'.
[[nodiscard]] std::string canonical_form(const Charge& charge);
// The charge a canonical form describes, validated like a decoded event: the inverse of
// canonical_form, for a record that kept it (an operator's follow-up without the message).
[[nodiscard]] std::expected<Charge, ValidationError> parse_canonical_form(std::string_view text);

// Account numbers never appear in full in logs: all but the last four characters masked.
[[nodiscard]] std::string masked(const AccountId& account);

}  // namespace ic::domain
