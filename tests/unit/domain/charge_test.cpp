// Value types: each rule of docs/design.md §5 accepted at its bounds and refused just past them.
#include "domain/charge.hpp"

#include <gtest/gtest.h>

#include "testing/fakes.hpp"

namespace ic::domain {
namespace {

TEST(ChargeId, AcceptsTheFullAlphabetAndBounds) {
  EXPECT_TRUE(ChargeId::parse("A"));
  EXPECT_TRUE(ChargeId::parse("az.AZ_09:-"));
  EXPECT_TRUE(ChargeId::parse(std::string(128, 'x')));
}

TEST(ChargeId, RefusesEmptyTooLongAndForeignCharacters) {
  for (const std::string& bad : {std::string(), std::string(129, 'x'), std::string("CHG 1"),
                                 std::string("CHG|1"), std::string("CHG/1"), std::string("CHG\n"),
                                 std::string("CH\0G", 4), std::string("CHG-\xc3\xa9")}) {
    auto parsed = ChargeId::parse(bad);
    ASSERT_FALSE(parsed) << bad;
    EXPECT_EQ(parsed.error().field, "chargeId");
  }
}

TEST(AccountId, BoundsAre1To64) {
  EXPECT_TRUE(AccountId::parse(std::string(64, '7')));
  EXPECT_EQ(AccountId::parse(std::string(65, '7')).error().field, "accountId");
}

TEST(ChargeType, IsUpperCaseCodeAlphabet) {
  EXPECT_TRUE(ChargeType::parse("CHEQUE_BOOK_FEE_2"));
  EXPECT_FALSE(ChargeType::parse("sms_alert_fee"));
  EXPECT_FALSE(ChargeType::parse("SMS-ALERT"));
  EXPECT_FALSE(ChargeType::parse(std::string(65, 'A')));
}

TEST(Currency, AcceptsIsoCodesOnly) {
  EXPECT_TRUE(Currency::parse("INR"));
  EXPECT_TRUE(Currency::parse("USD"));
  EXPECT_FALSE(Currency::parse("inr"));
  EXPECT_FALSE(Currency::parse("XXY"));
  EXPECT_FALSE(Currency::parse("INRR"));
  EXPECT_EQ(Currency::parse("").error().field, "currency");
}

TEST(Money, AmountIsOneToOneTrillionMinorUnits) {
  const Currency inr = *Currency::parse("INR");
  EXPECT_TRUE(Money::of(1, inr));
  EXPECT_TRUE(Money::of(Money::kMaxMinor, inr));
  EXPECT_EQ(Money::of(0, inr).error().field, "amountMinor");
  EXPECT_FALSE(Money::of(-5, inr));
  EXPECT_FALSE(Money::of(Money::kMaxMinor + 1, inr));
}

TEST(DueDate, IsARealCalendarDate) {
  EXPECT_EQ(DueDate::parse("2026-11-30")->iso(), "2026-11-30");
  EXPECT_EQ(DueDate::parse("2028-02-29")->iso(), "2028-02-29");
  for (const char* bad : {"2026-02-29", "2026-13-01", "2026-00-10", "2026-11-31", "26-11-30",
                          "2026/11/30", "2026-11-3", "2026-11-30T00:00:00Z", "+026-11-30", ""}) {
    EXPECT_FALSE(DueDate::parse(bad)) << bad;
  }
}

TEST(CanonicalForm, JoinsTheFieldsInTheDocumentedOrder) {
  EXPECT_EQ(canonical_form(testing::make_charge()),
            "v1|CHG-20261130-000123|ACC-0012345678|SMS_ALERT_FEE|2500|INR|2026-11-30");
}

TEST(CanonicalForm, ParsesBackIntoTheSameCharge) {
  const Charge c = testing::make_charge();
  auto parsed = parse_canonical_form(canonical_form(c));
  ASSERT_TRUE(parsed) << parsed.error().detail();
  EXPECT_EQ(*parsed, c);
  for (const char* bad :
       {"", "v1", "v2|CHG-1|ACC-1|FEE|1|INR|2026-11-30",
        "v1|CHG-1|ACC-1|FEE|1|INR|2026-11-30|extra", "v1|CHG-1|ACC-1|FEE|x|INR|2026-11-30",
        "v1|CHG-1|ACC-1|FEE|0|INR|2026-11-30", "v1|CHG 1|ACC-1|FEE|1|INR|2026-11-30",
        "v1|CHG-1|ACC-1|FEE|1|XXX|2026-11-30", "v1|CHG-1|ACC-1|FEE|1|INR|2026-02-30"}) {
    EXPECT_FALSE(parse_canonical_form(bad)) << bad;
  }
}

TEST(Masked, ShowsOnlyTheLastFourCharacters) {
  EXPECT_EQ(masked(*AccountId::parse("ACC-0012345678")), "**********5678");
  EXPECT_EQ(masked(*AccountId::parse("AB")), "*B");
}

}  // namespace
}  // namespace ic::domain
