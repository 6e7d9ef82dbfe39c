#include "application/charge_event_decoder.hpp"

#include <array>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/text_escape.hpp"

namespace ic::application {
namespace {

using domain::ValidationError;

// A repeated key is named in failureDetail; a real field name is far shorter.
constexpr std::size_t kMaxQuotedKeyChars = 64;

enum class Field { SchemaVersion, ChargeId, AccountId, ChargeType, AmountMinor, Currency, DueDate };
constexpr std::array<std::string_view, 7> kFieldNames = {
    "schemaVersion", kChargeIdField, "accountId", "chargeType",
    "amountMinor",   "currency",     "dueDate"};

std::optional<Field> field_named(std::string_view name) {
  for (std::size_t i = 0; i < kFieldNames.size(); ++i) {
    if (kFieldNames[i] == name) return static_cast<Field>(i);
  }
  return std::nullopt;
}

// nlohmann's out_of_range id for a number beyond double's range: well-formed JSON, refused as
// a number, not as a parse error.
constexpr int kNumberOverflow = 406;

// What the parser saw for one top-level field.
struct RawValue {
  enum class Kind { Absent, String, Integer, Other } kind = Kind::Absent;
  std::string text;
  std::int64_t integer = 0;
};

// A SAX consumer that keeps only the top-level fields we know and refuses, as it reads, what
// a DOM parser would silently accept: repeated keys (parsers disagree on which one wins) and
// unbounded nesting. Returning false stops the parse at once.
class EventSax final : public nlohmann::json_sax<nlohmann::json> {
 public:
  std::array<RawValue, kFieldNames.size()> fields;
  std::optional<ValidationError> error;

  bool null() override { return scalar(RawValue::Kind::Other); }
  bool boolean(bool) override { return scalar(RawValue::Kind::Other); }
  bool number_integer(number_integer_t value) override { return integer(value); }
  bool number_unsigned(number_unsigned_t value) override {
    // Beyond int64 nothing is a valid amount or version; saturate so range checks refuse it.
    constexpr auto kMax = static_cast<number_unsigned_t>(std::numeric_limits<std::int64_t>::max());
    return integer(value > kMax ? std::numeric_limits<std::int64_t>::max()
                                : static_cast<std::int64_t>(value));
  }
  bool number_float(number_float_t, const string_t&) override {
    return scalar(RawValue::Kind::Other);
  }
  bool string(string_t& value) override {
    if (containers_.empty()) return refuse({"body", "must be a JSON object"});
    if (RawValue* field = current_field()) {
      field->kind = RawValue::Kind::String;
      field->text = std::move(value);
    }
    return true;
  }
  bool binary(binary_t&) override { return scalar(RawValue::Kind::Other); }

  bool start_object(std::size_t) override { return open(true); }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(false); }
  bool end_array() override { return close(); }

  bool key(string_t& name) override {
    std::set<std::string>& seen = containers_.back().keys;
    if (!seen.insert(name).second) {
      // The key is the producer's text: quoted bounded and escaped, as failureDetail must be.
      return refuse(
          {containers_.size() == 1 ? escape_bounded(name, kMaxQuotedKeyChars) : std::string("body"),
           "must not be given more than once"});
    }
    current_key_ = containers_.size() == 1 ? field_named(name) : std::nullopt;
    return true;
  }

  bool parse_error(std::size_t position, const std::string&,
                   const nlohmann::detail::exception& cause) override {
    // The parser's own message quotes the input; a hostile body must not reach logs or DLQ
    // attributes through it, so only the position is reported.
    const std::string at = " (error at byte " + std::to_string(position) + ")";
    if (cause.id == kNumberOverflow) {
      const std::string field =
          current_field() != nullptr
              ? std::string(kFieldNames[static_cast<std::size_t>(*current_key_)])
              : std::string("body");
      return refuse({field, "must not hold a number too large to represent" + at});
    }
    return refuse({"body", "must be well-formed UTF-8 JSON" + at});
  }

 private:
  struct Container {
    bool is_object;
    std::set<std::string> keys;
  };

  RawValue* current_field() {
    if (containers_.size() != 1 || !current_key_) return nullptr;
    return &fields[static_cast<std::size_t>(*current_key_)];
  }
  bool scalar(RawValue::Kind kind) {
    if (containers_.empty()) return refuse({"body", "must be a JSON object"});
    if (RawValue* field = current_field()) field->kind = kind;
    return true;
  }
  bool integer(std::int64_t value) {
    if (containers_.empty()) return refuse({"body", "must be a JSON object"});
    if (RawValue* field = current_field()) {
      field->kind = RawValue::Kind::Integer;
      field->integer = value;
    }
    return true;
  }
  bool open(bool is_object) {
    if (containers_.empty() && !is_object) return refuse({"body", "must be a JSON object"});
    if (RawValue* field = current_field()) field->kind = RawValue::Kind::Other;
    if (containers_.size() >= kMaxNestingDepth) {
      return refuse({"body", "must not nest deeper than " + std::to_string(kMaxNestingDepth)});
    }
    containers_.push_back({is_object, {}});
    current_key_.reset();
    return true;
  }
  bool close() {
    containers_.pop_back();
    current_key_.reset();
    return true;
  }
  bool refuse(ValidationError e) {
    if (!error) error = std::move(e);
    return false;
  }

  std::vector<Container> containers_;
  std::optional<Field> current_key_;
};

ValidationError missing(Field field) {
  return {std::string(kFieldNames[static_cast<std::size_t>(field)]), "is required"};
}

std::expected<std::string, ValidationError> text_of(const RawValue& value, Field field) {
  if (value.kind == RawValue::Kind::Absent) return std::unexpected(missing(field));
  if (value.kind != RawValue::Kind::String) {
    return std::unexpected(ValidationError{
        std::string(kFieldNames[static_cast<std::size_t>(field)]), "must be a string"});
  }
  return value.text;
}

// gcc 12's std::expected has no and_then yet.
template <class T>
std::expected<T, ValidationError> parse_text(const RawValue& value, Field field) {
  auto text = text_of(value, field);
  if (!text) return std::unexpected(text.error());
  return T::parse(*text);
}

std::expected<std::int64_t, ValidationError> integer_of(const RawValue& value, Field field,
                                                        const std::string& rule) {
  if (value.kind == RawValue::Kind::Absent) return std::unexpected(missing(field));
  if (value.kind != RawValue::Kind::Integer) {
    return std::unexpected(
        ValidationError{std::string(kFieldNames[static_cast<std::size_t>(field)]), rule});
  }
  return value.integer;
}

std::expected<domain::Charge, ValidationError> build(const EventSax& sax) {
  auto raw = [&](Field f) -> const RawValue& { return sax.fields[static_cast<std::size_t>(f)]; };
  const std::string version_rule = "must be the integer " + std::to_string(kSchemaVersion);
  auto version = integer_of(raw(Field::SchemaVersion), Field::SchemaVersion, version_rule);
  if (!version) return std::unexpected(version.error());
  if (*version != kSchemaVersion) {
    return std::unexpected(ValidationError{"schemaVersion", version_rule});
  }
  auto id = parse_text<domain::ChargeId>(raw(Field::ChargeId), Field::ChargeId);
  if (!id) return std::unexpected(id.error());
  auto account = parse_text<domain::AccountId>(raw(Field::AccountId), Field::AccountId);
  if (!account) return std::unexpected(account.error());
  auto type = parse_text<domain::ChargeType>(raw(Field::ChargeType), Field::ChargeType);
  if (!type) return std::unexpected(type.error());
  auto amount = integer_of(raw(Field::AmountMinor), Field::AmountMinor,
                           "must be an integer from 1 to 1000000000000");
  if (!amount) return std::unexpected(amount.error());
  auto currency = parse_text<domain::Currency>(raw(Field::Currency), Field::Currency);
  if (!currency) return std::unexpected(currency.error());
  auto money = domain::Money::of(*amount, *currency);
  if (!money) return std::unexpected(money.error());
  auto due = parse_text<domain::DueDate>(raw(Field::DueDate), Field::DueDate);
  if (!due) return std::unexpected(due.error());
  return domain::Charge{*id, *account, *type, *money, *due};
}

bool parse(std::string_view body, EventSax& sax) {
  return nlohmann::json::sax_parse(body, &sax, nlohmann::json::input_format_t::json,
                                   /*strict=*/true);
}

}  // namespace

std::expected<domain::Charge, ValidationError> decode_charge_due_event(std::string_view body) {
  if (body.size() > kMaxBodyBytes) {
    return std::unexpected(
        ValidationError{"body", "must be at most " + std::to_string(kMaxBodyBytes) + " bytes"});
  }
  EventSax sax;
  const bool parsed = parse(body, sax);
  if (!parsed || sax.error) {
    return std::unexpected(
        sax.error.value_or(ValidationError{"body", "must be well-formed UTF-8 JSON"}));
  }
  return build(sax);
}

std::optional<domain::ChargeId> parseable_charge_id(std::string_view body) {
  if (body.size() > kMaxBodyBytes) return std::nullopt;
  EventSax sax;
  (void)parse(body, sax);  // a refused body still leaves the fields read before the refusal
  // A chargeId given twice names none: which one is meant is the ambiguity refused.
  if (sax.error && sax.error->field == kFieldNames[static_cast<std::size_t>(Field::ChargeId)]) {
    return std::nullopt;
  }
  const RawValue& id = sax.fields[static_cast<std::size_t>(Field::ChargeId)];
  if (id.kind != RawValue::Kind::String) return std::nullopt;
  auto parsed = domain::ChargeId::parse(id.text);
  return parsed ? std::optional(*parsed) : std::nullopt;
}

}  // namespace ic::application
