// The payload hash is SHA-256 of the canonical form, whatever the JSON looked like.
#include "application/payload_hash.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <random>

#include "application/charge_event_decoder.hpp"
#include "core/sha256.hpp"
#include "testing/fakes.hpp"

namespace ic::application {
namespace {

TEST(PayloadHash, IsSha256OfTheCanonicalForm) {
  // printf 'v1|CHG-20261130-000123|ACC-0012345678|SMS_ALERT_FEE|2500|INR|2026-11-30' | sha256sum
  EXPECT_EQ(payload_hash(testing::make_charge()),
            "8530c384c75a8b446ce9350c841dc83d8f8bd3e1fdbe9ec4d8b67f337d3702bb");
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(PayloadHash, ChangesWithEveryField) {
  const std::string base = payload_hash(testing::make_charge());
  EXPECT_NE(payload_hash(testing::make_charge("CHG-20261130-000124")), base);
  EXPECT_NE(payload_hash(testing::make_charge("CHG-20261130-000123", 2501)), base);
  EXPECT_NE(payload_hash(testing::make_charge("CHG-20261130-000123", 2500, "ACC-1")), base);
}

std::string identifier(const std::string& alphabet, std::size_t max_length) {
  const auto length = *rc::gen::inRange<std::size_t>(1, max_length + 1);
  std::string out;
  for (std::size_t i = 0; i < length; ++i) {
    out += alphabet[*rc::gen::inRange<std::size_t>(0, alphabet.size())];
  }
  return out;
}

RC_GTEST_PROP(PayloadHash, IgnoresKeyOrderWhitespaceAndExtraFields, ()) {
  const std::string id_chars = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._:-";
  nlohmann::json event = {
      {"schemaVersion", 1},
      {"chargeId", identifier(id_chars, 128)},
      {"accountId", identifier(id_chars, 64)},
      {"chargeType", identifier("ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_", 64)},
      {"amountMinor", *rc::gen::inRange<std::int64_t>(1, 1'000'000'000'001)},
      {"currency", *rc::gen::element<std::string>("INR", "USD", "EUR", "JPY", "GBP")},
      {"dueDate", "20" + std::to_string(*rc::gen::inRange(10, 100)) + "-0" +
                      std::to_string(*rc::gen::inRange(1, 10)) + "-1" +
                      std::to_string(*rc::gen::inRange(0, 10))}};
  auto compact = decode_charge_due_event(event.dump());
  RC_ASSERT(compact.has_value());

  // Same fields, shuffled order, random indentation, one unknown field.
  std::vector<std::string> members;
  for (const auto& [key, value] : event.items()) {
    members.push_back(nlohmann::json(key).dump() + " :\n " + value.dump());
  }
  members.push_back(R"("producer" : {"retry": true})");
  std::mt19937 rng(*rc::gen::arbitrary<unsigned>());
  std::ranges::shuffle(members, rng);
  std::string spaced = "{ ";
  for (std::size_t i = 0; i < members.size(); ++i) {
    spaced += (i ? ",\t" : "") + members[i];
  }
  spaced += " }\n";
  auto reformatted = decode_charge_due_event(spaced);
  RC_ASSERT(reformatted.has_value());
  RC_ASSERT(payload_hash(*compact) == payload_hash(*reformatted));
}

}  // namespace
}  // namespace ic::application
