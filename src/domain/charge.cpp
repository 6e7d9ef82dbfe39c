#include "domain/charge.hpp"

#include <algorithm>
#include <array>
#include <charconv>
#include <vector>

namespace ic::domain {
namespace rules {

bool is_identifier_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '.' ||
         c == '_' || c == ':' || c == '-';
}

bool is_upper_code_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

}  // namespace rules

namespace {

// ISO 4217 active alphabetic codes (list published by SIX, amendment 179), sorted for search.
constexpr auto kIso4217 = std::to_array<std::string_view>(
    {"AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT",
     "BGN", "BHD", "BIF", "BMD", "BND", "BOB", "BOV", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD",
     "CAD", "CDF", "CHE", "CHF", "CHW", "CLF", "CLP", "CNY", "COP", "COU", "CRC", "CUC", "CUP",
     "CVE", "CZK", "DJF", "DKK", "DOP", "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP",
     "GEL", "GHS", "GIP", "GMD", "GNF", "GTQ", "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS",
     "INR", "IQD", "IRR", "ISK", "JMD", "JOD", "JPY", "KES", "KGS", "KHR", "KMF", "KPW", "KRW",
     "KWD", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL", "LYD", "MAD", "MDL", "MGA", "MKD",
     "MMK", "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN", "MXV", "MYR", "MZN", "NAD", "NGN",
     "NIO", "NOK", "NPR", "NZD", "OMR", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "PYG", "QAR",
     "RON", "RSD", "RUB", "RWF", "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SLL",
     "SOS", "SRD", "SSP", "STN", "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TND", "TOP", "TRY",
     "TTD", "TWD", "TZS", "UAH", "UGX", "USD", "USN", "UYI", "UYU", "UYW", "UZS", "VED", "VES",
     "VND", "VUV", "WST", "XAF", "XAG", "XAU", "XBA", "XBB", "XBC", "XBD", "XCD", "XDR", "XOF",
     "XPD", "XPF", "XPT", "XSU", "XUA", "YER", "ZAR", "ZMW", "ZWL"});
static_assert(std::ranges::is_sorted(kIso4217), "binary search needs the list sorted");

bool parse_digits(std::string_view text, int& out) {
  if (text.empty() || !std::ranges::all_of(text, [](char c) { return c >= '0' && c <= '9'; })) {
    return false;
  }
  return std::from_chars(text.data(), text.data() + text.size(), out).ec == std::errc{};
}

}  // namespace

std::expected<Currency, ValidationError> Currency::parse(std::string_view code) {
  if (!std::ranges::binary_search(kIso4217, code)) {
    return std::unexpected(
        ValidationError{"currency", "must be an ISO 4217 alphabetic code in upper case"});
  }
  return Currency(std::string(code));
}

std::expected<Money, ValidationError> Money::of(std::int64_t amount_minor, Currency currency) {
  if (amount_minor < 1 || amount_minor > kMaxMinor) {
    return std::unexpected(
        ValidationError{"amountMinor", "must be an integer from 1 to 1000000000000"});
  }
  return Money(amount_minor, std::move(currency));
}

std::expected<DueDate, ValidationError> DueDate::parse(std::string_view iso_date) {
  const ValidationError error{"dueDate", "must be a calendar date YYYY-MM-DD"};
  int year = 0, month = 0, day = 0;
  if (iso_date.size() != 10 || iso_date[4] != '-' || iso_date[7] != '-' ||
      !parse_digits(iso_date.substr(0, 4), year) || !parse_digits(iso_date.substr(5, 2), month) ||
      !parse_digits(iso_date.substr(8, 2), day)) {
    return std::unexpected(error);
  }
  const std::chrono::year_month_day date{std::chrono::year{year},
                                         std::chrono::month{static_cast<unsigned>(month)},
                                         std::chrono::day{static_cast<unsigned>(day)}};
  if (!date.ok()) return std::unexpected(error);
  return DueDate(date);
}

std::string DueDate::iso() const {
  char buffer[11];
  const int year = static_cast<int>(date_.year());
  const auto month = static_cast<unsigned>(date_.month());
  const auto day = static_cast<unsigned>(date_.day());
  buffer[0] = static_cast<char>('0' + year / 1000);
  buffer[1] = static_cast<char>('0' + year / 100 % 10);
  buffer[2] = static_cast<char>('0' + year / 10 % 10);
  buffer[3] = static_cast<char>('0' + year % 10);
  buffer[4] = '-';
  buffer[5] = static_cast<char>('0' + month / 10);
  buffer[6] = static_cast<char>('0' + month % 10);
  buffer[7] = '-';
  buffer[8] = static_cast<char>('0' + day / 10);
  buffer[9] = static_cast<char>('0' + day % 10);
  buffer[10] = '\0';
  return buffer;
}

std::string canonical_form(const Charge& charge) {
  std::string out = "v1|";
  out += charge.id.value();
  out += '|';
  out += charge.account.value();
  out += '|';
  out += charge.type.value();
  out += '|';
  out += std::to_string(charge.amount.amount_minor());
  out += '|';
  out += charge.amount.currency().code();
  out += '|';
  out += charge.due.iso();
  return out;
}

std::expected<Charge, ValidationError> parse_canonical_form(std::string_view text) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const std::size_t bar = text.find('|', start);
    parts.push_back(text.substr(start, bar == std::string_view::npos ? bar : bar - start));
    if (bar == std::string_view::npos) break;
    start = bar + 1;
  }
  const ValidationError malformed{"payload",
                                  "must be v1|chargeId|accountId|chargeType|"
                                  "amountMinor|currency|dueDate"};
  if (parts.size() != 7 || parts[0] != "v1") return std::unexpected(malformed);
  auto id = ChargeId::parse(parts[1]);
  if (!id) return std::unexpected(id.error());
  auto account = AccountId::parse(parts[2]);
  if (!account) return std::unexpected(account.error());
  auto type = ChargeType::parse(parts[3]);
  if (!type) return std::unexpected(type.error());
  std::int64_t minor = 0;
  const auto [end, ec] = std::from_chars(parts[4].data(), parts[4].data() + parts[4].size(), minor);
  if (ec != std::errc{} || end != parts[4].data() + parts[4].size()) {
    return std::unexpected(malformed);
  }
  auto currency = Currency::parse(parts[5]);
  if (!currency) return std::unexpected(currency.error());
  auto money = Money::of(minor, *currency);
  if (!money) return std::unexpected(money.error());
  auto due = DueDate::parse(parts[6]);
  if (!due) return std::unexpected(due.error());
  return Charge{*id, *account, *type, *money, *due};
}

std::string masked(const AccountId& account) {
  const std::string& value = account.value();
  const std::size_t shown = std::min<std::size_t>(4, value.size() / 2);
  return std::string(value.size() - shown, '*') + value.substr(value.size() - shown);
}

}  // namespace ic::domain
