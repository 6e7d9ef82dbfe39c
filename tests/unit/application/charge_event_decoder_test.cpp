// ChargeDueEvent v1 decoding: one refusal per rule of docs/design.md §5, each naming field and
// rule.
#include "application/charge_event_decoder.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <nlohmann/json.hpp>

namespace ic::application {
namespace {

using ::testing::HasSubstr;

const std::string kValid =
    R"({"schemaVersion":1,"chargeId":"CHG-20261130-000123","accountId":"ACC-0012345678",)"
    R"("chargeType":"SMS_ALERT_FEE","amountMinor":2500,"currency":"INR","dueDate":"2026-11-30"})";

// The valid event with one field replaced by raw JSON (or removed when `raw` is empty).
std::string with_field(const std::string& field, const std::string& raw) {
  nlohmann::ordered_json event = nlohmann::ordered_json::parse(kValid);
  if (raw.empty()) {
    event.erase(field);
  } else {
    event[field] = nlohmann::ordered_json::parse(raw);
  }
  return event.dump();
}

domain::ValidationError refusal(const std::string& body) {
  auto decoded = decode_charge_due_event(body);
  EXPECT_FALSE(decoded.has_value()) << "accepted: " << body.substr(0, 200);
  return decoded.has_value() ? domain::ValidationError{} : decoded.error();
}

TEST(ChargeEventDecoder, DecodesTheDocumentedExample) {
  auto decoded = decode_charge_due_event(kValid);
  ASSERT_TRUE(decoded) << decoded.error().detail();
  EXPECT_EQ(decoded->id.value(), "CHG-20261130-000123");
  EXPECT_EQ(decoded->account.value(), "ACC-0012345678");
  EXPECT_EQ(decoded->type.value(), "SMS_ALERT_FEE");
  EXPECT_EQ(decoded->amount.amount_minor(), 2500);
  EXPECT_EQ(decoded->amount.currency().code(), "INR");
  EXPECT_EQ(decoded->due.iso(), "2026-11-30");
}

TEST(ChargeEventDecoder, IgnoresUnknownFieldsAndKeyOrder) {
  const std::string reordered =
      R"({ "dueDate":"2026-11-30", "extra":{"nested":[1,2,{"x":null}]}, "currency":"INR",)"
      R"( "amountMinor":2500, "chargeType":"SMS_ALERT_FEE", "accountId":"ACC-0012345678",)"
      "\n\t\"chargeId\":\"CHG-20261130-000123\", \"schemaVersion\":1, \"note\":\"\\u00e9\"}";
  auto a = decode_charge_due_event(kValid);
  auto b = decode_charge_due_event(reordered);
  ASSERT_TRUE(a && b) << (b ? "" : b.error().detail());
  EXPECT_EQ(*a, *b);
}

struct Rule {
  std::string field;
  std::string raw;  // replacement JSON, empty = remove the field
  std::string expected_rule;
};

class FieldRule : public ::testing::TestWithParam<std::pair<const std::string, Rule>> {};

TEST_P(FieldRule, IsRefusedNamingFieldAndRule) {
  const Rule& rule = GetParam().second;
  const domain::ValidationError error = refusal(with_field(rule.field, rule.raw));
  EXPECT_EQ(error.field, rule.field);
  EXPECT_THAT(error.rule, HasSubstr(rule.expected_rule));
}

const std::map<std::string, Rule> kRules = {
    {"SchemaVersionMissing", {"schemaVersion", "", "is required"}},
    {"SchemaVersionTwo", {"schemaVersion", "2", "must be the integer 1"}},
    {"SchemaVersionString", {"schemaVersion", R"("1")", "must be the integer 1"}},
    {"ChargeIdMissing", {"chargeId", "", "is required"}},
    {"ChargeIdEmpty", {"chargeId", R"("")", "1-128 characters"}},
    {"ChargeIdTooLong", {"chargeId", '"' + std::string(129, 'C') + '"', "1-128 characters"}},
    {"ChargeIdBadCharacter", {"chargeId", R"("CHG 1")", "[A-Za-z0-9._:-]"}},
    {"ChargeIdControlCharacter", {"chargeId", R"("CHG\u0001")", "[A-Za-z0-9._:-]"}},
    {"ChargeIdNumber", {"chargeId", "123", "must be a string"}},
    {"AccountIdMissing", {"accountId", "", "is required"}},
    {"AccountIdTooLong", {"accountId", '"' + std::string(65, 'A') + '"', "1-64 characters"}},
    {"AccountIdBadCharacter", {"accountId", R"("ACC/1")", "[A-Za-z0-9._:-]"}},
    {"ChargeTypeMissing", {"chargeType", "", "is required"}},
    {"ChargeTypeLowerCase", {"chargeType", R"("sms_fee")", "[A-Z0-9_]"}},
    {"ChargeTypeNull", {"chargeType", "null", "must be a string"}},
    {"AmountMissing", {"amountMinor", "", "is required"}},
    {"AmountZero", {"amountMinor", "0", "from 1 to 1000000000000"}},
    {"AmountNegative", {"amountMinor", "-2500", "from 1 to 1000000000000"}},
    {"AmountTooLarge", {"amountMinor", "1000000000001", "from 1 to 1000000000000"}},
    {"AmountHuge", {"amountMinor", "123456789012345678901234567890", "from 1 to 1000000000000"}},
    {"AmountFloat", {"amountMinor", "25.5", "from 1 to 1000000000000"}},
    {"AmountWholeFloat", {"amountMinor", "2500.0", "from 1 to 1000000000000"}},
    {"AmountString", {"amountMinor", R"("2500")", "from 1 to 1000000000000"}},
    {"CurrencyMissing", {"currency", "", "is required"}},
    {"CurrencyUnknown", {"currency", R"("ABC")", "ISO 4217"}},
    {"CurrencyLowerCase", {"currency", R"("inr")", "ISO 4217"}},
    {"DueDateMissing", {"dueDate", "", "is required"}},
    {"DueDateNotADate", {"dueDate", R"("2026-02-30")", "calendar date"}},
    {"DueDateWrongFormat", {"dueDate", R"("30/11/2026")", "calendar date"}},
    {"DueDateArray", {"dueDate", R"(["2026-11-30"])", "must be a string"}},
};

INSTANTIATE_TEST_SUITE_P(ChargeEventDecoder, FieldRule, ::testing::ValuesIn(kRules),
                         [](const auto& test_info) { return test_info.param.first; });

TEST(ChargeEventDecoder, RefusesMalformedJson) {
  EXPECT_EQ(refusal(R"({"chargeId":)").field, "body");
  EXPECT_EQ(refusal("").field, "body");
  EXPECT_THAT(refusal(kValid + "}").rule, HasSubstr("well-formed"));
}

TEST(ChargeEventDecoder, RefusesANonObjectBody) {
  for (const char* body : {"[1,2]", "42", "\"text\"", "null", "true"}) {
    EXPECT_THAT(refusal(body).rule, HasSubstr("must be a JSON object")) << body;
  }
}

TEST(ChargeEventDecoder, RefusesAKeyGivenTwice) {
  const std::string twice = kValid.substr(0, kValid.size() - 1) + R"(,"amountMinor":1})";
  const domain::ValidationError error = refusal(twice);
  EXPECT_EQ(error.field, "amountMinor");
  EXPECT_THAT(error.rule, HasSubstr("more than once"));
}

// The repeated key is the producer's text: a 200 KB key or one with raw control characters
// must reach failureDetail (and the log line) bounded and escaped.
TEST(ChargeEventDecoder, NamesAHostileRepeatedKeyBoundedAndEscaped) {
  const std::string long_key(200'000, 'k');
  const domain::ValidationError huge =
      refusal(R"({")" + long_key + R"(":1,")" + long_key + R"(":2})");
  EXPECT_EQ(huge.field, std::string(61, 'k') + "...");
  EXPECT_THAT(huge.rule, HasSubstr("more than once"));

  // JSON escapes: the parser hands the key over with the raw U+0001 and ESC in it.
  const domain::ValidationError control = refusal(R"({"\u0001\u001b[31m":1,"\u0001\u001b[31m":2})");
  EXPECT_EQ(control.field, "\\u0001\\u001b[31m");
}

TEST(ChargeEventDecoder, RefusesRepeatedKeysInNestedObjectsToo) {
  const std::string nested = kValid.substr(0, kValid.size() - 1) + R"(,"x":{"a":1,"a":2}})";
  EXPECT_THAT(refusal(nested).rule, HasSubstr("more than once"));
}

TEST(ChargeEventDecoder, RefusesBodiesOverOneMebibyte) {
  const std::string padding(kMaxBodyBytes, ' ');
  const std::string body = kValid.substr(0, kValid.size() - 1) + padding + "}";
  const domain::ValidationError error = refusal(body);
  EXPECT_EQ(error.field, "body");
  EXPECT_THAT(error.rule, HasSubstr("at most 1048576 bytes"));
}

TEST(ChargeEventDecoder, RefusesInvalidUtf8) {
  std::string body = kValid;
  body.replace(body.find("ACC-"), 3, "A\xff\xfe");
  EXPECT_THAT(refusal(body).rule, HasSubstr("UTF-8"));
}

TEST(ChargeEventDecoder, RefusesRawControlCharactersInStrings) {
  std::string body = kValid;
  body.replace(body.find("CHG-"), 1, "\x01");
  EXPECT_EQ(refusal(body).field, "body");
}

TEST(ChargeEventDecoder, RefusesDeepNestingWithoutRecursing) {
  const std::string deep = R"({"x":)" + std::string(100000, '[') + std::string(100000, ']') + "}";
  EXPECT_THAT(refusal(deep).rule, HasSubstr("deeper than"));
}

TEST(ChargeEventDecoder, ErrorDetailNeverEchoesTheInput) {
  const domain::ValidationError error = refusal("{\"secret-token-xyz\" 1}");
  EXPECT_THAT(error.detail(), ::testing::Not(HasSubstr("secret-token-xyz")));
}

}  // namespace
}  // namespace ic::application
