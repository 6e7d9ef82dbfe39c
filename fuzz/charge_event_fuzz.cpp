// The charge-event decoder against any body, checked against a DOM parse: what it accepts must
// be an object the DOM parser reads with the same field values, and what it refuses must
// become a DLQ copy SQS would take (bounded, SQS-safe attributes).
#include <nlohmann/json.hpp>
#include <string>

#include "application/charge_event_decoder.hpp"
#include "consumer/dead_letter.hpp"
#include "core/text_escape.hpp"
#include "fuzz_support.hpp"

namespace {

using nlohmann::json;

bool is_string(const json& object, const char* name, const std::string& expected) {
  const auto it = object.find(name);
  return it != object.end() && it->is_string() && it->get<std::string>() == expected;
}

bool is_integer(const json& object, const char* name, std::int64_t expected) {
  const auto it = object.find(name);
  return it != object.end() && it->is_number_integer() && it->get<std::int64_t>() == expected;
}

void check_accepted(std::string_view body, const ic::domain::Charge& charge) {
  const auto dom = json::parse(body, nullptr, /*allow_exceptions=*/false);
  FUZZ_CHECK(!dom.is_discarded() && dom.is_object());
  FUZZ_CHECK(is_integer(dom, "schemaVersion", ic::application::kSchemaVersion));
  FUZZ_CHECK(is_string(dom, "chargeId", charge.id.value()));
  FUZZ_CHECK(is_string(dom, "accountId", charge.account.value()));
  FUZZ_CHECK(is_string(dom, "chargeType", charge.type.value()));
  FUZZ_CHECK(is_integer(dom, "amountMinor", charge.amount.amount_minor()));
  FUZZ_CHECK(is_string(dom, "currency", charge.amount.currency().code()));
  FUZZ_CHECK(is_string(dom, "dueDate", charge.due.iso()));
}

void check_refused(std::string_view body, const ic::domain::ValidationError& error) {
  const ic::consumer::Message message{.message_id = "m", .body = std::string(body)};
  const auto attributes = ic::consumer::dead_letter_attributes(
      message, {.reason = "INVALID_MESSAGE", .detail = error.detail(), .key = ""}, "chargeId");
  const auto& detail = attributes.at("failureDetail").value;
  FUZZ_CHECK(ic::xml_chars_only(detail));
  FUZZ_CHECK(ic::fuzz::code_points(detail) <= ic::kMaxDetailChars);
}

}  // namespace

int fuzz_one(const std::uint8_t* data, std::size_t size) {
  const std::string_view body(reinterpret_cast<const char*>(data), size);
  const auto decoded = ic::application::decode_charge_due_event(body);
  if (decoded) {
    check_accepted(body, *decoded);
  } else {
    check_refused(body, decoded.error());
  }
  return 0;
}
