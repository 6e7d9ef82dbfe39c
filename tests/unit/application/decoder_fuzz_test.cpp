// Hostile input never crashes the decoder (run under ASan/UBSan in CI): 12,000 random and
// mutated bodies, from a fixed seed so a failure reproduces. Whatever is accepted must satisfy
// every rule, checked independently by re-parsing its fields.
#include <gtest/gtest.h>

#include <array>
#include <random>
#include <string>

#include "application/charge_event_decoder.hpp"

namespace ic::application {
namespace {

const std::string kSeedBody =
    R"({"schemaVersion":1,"chargeId":"CHG-20261130-000123","accountId":"ACC-0012345678",)"
    R"("chargeType":"SMS_ALERT_FEE","amountMinor":2500,"currency":"INR","dueDate":"2026-11-30"})";

// Fragments that hit the decoder's edges: structure, escapes, numbers, encodings.
constexpr std::array<std::string_view, 24> kFragments = {"{",
                                                         "}",
                                                         "[",
                                                         "]",
                                                         "\"",
                                                         ":",
                                                         ",",
                                                         "\\",
                                                         "\\u0000",
                                                         "\\ud800",
                                                         "1e999",
                                                         "-0",
                                                         "18446744073709551616",
                                                         "99999999999999999999999",
                                                         "0.0000001",
                                                         "null",
                                                         "true",
                                                         "\"amountMinor\":",
                                                         "\"chargeId\":",
                                                         "\xff",
                                                         "\xc3\x28",
                                                         "\xf0\x9f\x98\x80",
                                                         "\t\n ",
                                                         "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["};

class Mutator {
 public:
  explicit Mutator(std::uint32_t seed) : rng_(seed) {}

  std::string next() {
    if (pick(10) == 0) return random_bytes();
    std::string body = kSeedBody;
    const std::size_t edits = 1 + pick(4);
    for (std::size_t i = 0; i < edits; ++i) mutate(body);
    return body;
  }

 private:
  std::size_t pick(std::size_t bound) {
    return std::uniform_int_distribution<std::size_t>(0, bound - 1)(rng_);
  }

  std::string random_bytes() {
    std::string body(pick(256), '\0');
    for (char& c : body) c = static_cast<char>(pick(256));
    return body;
  }

  void mutate(std::string& body) {
    if (body.empty()) body = "{";
    const std::size_t at = pick(body.size());
    switch (pick(5)) {
      case 0:
        body[at] = static_cast<char>(pick(256));
        break;
      case 1:
        body.insert(at, kFragments[pick(kFragments.size())]);
        break;
      case 2:
        body.erase(at, 1 + pick(8));
        break;
      case 3:
        body.insert(at, body.substr(at, 1 + pick(40)));  // duplicates keys and values
        break;
      default:
        body.replace(at, 1 + pick(6), kFragments[pick(kFragments.size())]);
        break;
    }
  }

  std::mt19937 rng_;
};

TEST(DecoderFuzz, TwelveThousandMutatedBodiesNeverCrashAndAcceptOnlyValidCharges) {
  Mutator mutator(20261130);
  int accepted = 0, refused = 0;
  for (int i = 0; i < 12'000; ++i) {
    const std::string body = mutator.next();
    auto decoded = decode_charge_due_event(body);
    if (!decoded) {
      ++refused;
      EXPECT_FALSE(decoded.error().field.empty());
      EXPECT_FALSE(decoded.error().rule.empty());
      continue;
    }
    ++accepted;
    ASSERT_TRUE(domain::ChargeId::parse(decoded->id.value())) << body;
    ASSERT_TRUE(domain::AccountId::parse(decoded->account.value())) << body;
    ASSERT_TRUE(domain::Money::of(decoded->amount.amount_minor(), decoded->amount.currency()));
    ASSERT_TRUE(domain::DueDate::parse(decoded->due.iso())) << body;
  }
  EXPECT_EQ(accepted + refused, 12'000);
  EXPECT_GT(refused, 6'000) << "the mutator must actually produce hostile input";
}

}  // namespace
}  // namespace ic::application
