// Hex encoding: two digits per byte, high nibble first, in the case asked for.
#include "core/hex.hpp"

#include <gtest/gtest.h>

#include <array>
#include <vector>

namespace ic {
namespace {

TEST(Hex, EncodesEveryByteAsTwoDigits) {
  const std::array<unsigned char, 5> bytes{0x00, 0x0f, 0xa0, 0x7e, 0xff};
  EXPECT_EQ(to_hex(bytes), "000fa07eff");
  EXPECT_EQ(to_hex(bytes, HexCase::Upper), "000FA07EFF");
  EXPECT_EQ(to_hex(std::span<const unsigned char>{}), "");
}

TEST(Hex, AppendsAfterWhatIsThere) {
  std::string out = "%";
  const unsigned char slash = '/';
  append_hex(out, {&slash, 1}, HexCase::Upper);
  EXPECT_EQ(out, "%2F");
}

TEST(Hex, AllByteValuesRoundTrip) {
  std::vector<unsigned char> bytes;
  for (int b = 0; b < 256; ++b) bytes.push_back(static_cast<unsigned char>(b));
  const std::string text = to_hex(bytes);
  ASSERT_EQ(text.size(), 512u);
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    EXPECT_EQ(std::stoi(text.substr(2 * i, 2), nullptr, 16), bytes[i]) << i;
  }
}

}  // namespace
}  // namespace ic
