// escape_bounded: what reaches a DLQ attribute or a log field from outside is escaped into SQS's
// attribute alphabet and cut at a bound, never split inside an escape or a UTF-8 sequence.
#include "core/text_escape.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

namespace ic {
namespace {

std::size_t code_points(std::string_view text) {
  std::size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

TEST(BoundedText, KeepsPrintableTextIncludingNonAscii) {
  EXPECT_EQ(escape_bounded("chargeId: is required"), "chargeId: is required");
  EXPECT_EQ(escape_bounded("caf\xc3\xa9 \xe2\x82\xb9 \xf0\x9f\x92\xb0"),
            "caf\xc3\xa9 \xe2\x82\xb9 \xf0\x9f\x92\xb0");
}

TEST(BoundedText, EscapesControlsAndWhatSqsRefuses) {
  EXPECT_EQ(escape_bounded(std::string("a\x01\x1b[31m\n\t\r") + std::string(1, '\0')),
            "a\\u0001\\u001b[31m\\u000a\\u0009\\u000d\\u0000");
  EXPECT_EQ(escape_bounded("back\\slash"), "back\\slash");
  EXPECT_EQ(escape_bounded("del\x7f c1\xc2\x85"), "del\\u007f c1\\u0085");
  EXPECT_EQ(escape_bounded("\xef\xbf\xbe\xef\xbf\xbf"), "\\ufffe\\uffff");
}

TEST(BoundedText, EscapesEachByteOfMalformedUtf8) {
  EXPECT_EQ(escape_bounded("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(escape_bounded("\xc3\x28"), "\\xc3(");                        // bad continuation
  EXPECT_EQ(escape_bounded("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(escape_bounded("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(escape_bounded("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(escape_bounded("\xe2\x82"), "\\xe2\\x82");                    // truncated
}

TEST(BoundedText, CutsAtTheBoundWithAnEllipsisAndNeverSplitsAnEscape) {
  const std::string cut = escape_bounded(std::string(200'000, 'k'));
  EXPECT_EQ(cut, std::string(kMaxDetailChars - 3, 'k') + "...");
  EXPECT_EQ(escape_bounded(std::string(10, '\x01'), 20), "\\u0001\\u0001...");
  EXPECT_EQ(escape_bounded("exactly", 7), "exactly");
  EXPECT_EQ(escape_bounded("one more", 7), "one ...");
  EXPECT_EQ(escape_bounded("x", 0), "x") << "the bound is at least the ellipsis";
}

RC_GTEST_PROP(BoundedText, AnyInputGivesBoundedSqsSafeText, (const std::string& input)) {
  const std::size_t bound = *rc::gen::inRange<std::size_t>(3, 300);
  const std::string out = escape_bounded(input, bound);
  RC_ASSERT(xml_chars_only(out));
  RC_ASSERT(code_points(out) <= bound);
  RC_ASSERT(escape_bounded(out, bound) == out);  // bounding twice changes nothing
  for (const char c : out) RC_ASSERT(static_cast<unsigned char>(c) >= 0x20);
}

TEST(SqsAttributeSafe, FollowsTheSqsAlphabet) {
  EXPECT_TRUE(xml_chars_only("tab\tnl\ncr\r \xee\x80\x80 \xf0\x9f\x92\xb0"));
  EXPECT_FALSE(xml_chars_only(std::string(1, '\x01')));
  EXPECT_FALSE(xml_chars_only("\xef\xbf\xbe"));
  EXPECT_FALSE(xml_chars_only("\xff"));
}

}  // namespace
}  // namespace ic
