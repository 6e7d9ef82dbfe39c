// bounded_text: what reaches a DLQ attribute or a log field from outside is escaped into SQS's
// attribute alphabet and cut at a bound, never split inside an escape or a UTF-8 sequence.
#include "core/bounded_text.hpp"

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
  EXPECT_EQ(bounded_text("chargeId: is required"), "chargeId: is required");
  EXPECT_EQ(bounded_text("caf\xc3\xa9 \xe2\x82\xb9 \xf0\x9f\x92\xb0"),
            "caf\xc3\xa9 \xe2\x82\xb9 \xf0\x9f\x92\xb0");
}

TEST(BoundedText, EscapesControlsAndWhatSqsRefuses) {
  EXPECT_EQ(bounded_text(std::string("a\x01\x1b[31m\n\t\r") + std::string(1, '\0')),
            "a\\u0001\\u001b[31m\\u000a\\u0009\\u000d\\u0000");
  EXPECT_EQ(bounded_text("back\\slash"), "back\\slash");
  EXPECT_EQ(bounded_text("del\x7f c1\xc2\x85"), "del\\u007f c1\\u0085");
  EXPECT_EQ(bounded_text("\xef\xbf\xbe\xef\xbf\xbf"), "\\ufffe\\uffff");
}

TEST(BoundedText, EscapesEachByteOfMalformedUtf8) {
  EXPECT_EQ(bounded_text("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(bounded_text("\xc3\x28"), "\\xc3(");                        // bad continuation
  EXPECT_EQ(bounded_text("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(bounded_text("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // a surrogate
  EXPECT_EQ(bounded_text("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // above U+10FFFF
  EXPECT_EQ(bounded_text("\xe2\x82"), "\\xe2\\x82");                    // truncated
}

TEST(BoundedText, CutsAtTheBoundWithAnEllipsisAndNeverSplitsAnEscape) {
  const std::string cut = bounded_text(std::string(200'000, 'k'));
  EXPECT_EQ(cut, std::string(kMaxDetailChars - 3, 'k') + "...");
  EXPECT_EQ(bounded_text(std::string(10, '\x01'), 20), "\\u0001\\u0001...");
  EXPECT_EQ(bounded_text("exactly", 7), "exactly");
  EXPECT_EQ(bounded_text("one more", 7), "one ...");
  EXPECT_EQ(bounded_text("x", 0), "x") << "the bound is at least the ellipsis";
}

RC_GTEST_PROP(BoundedText, AnyInputGivesBoundedSqsSafeText, (const std::string& input)) {
  const std::size_t bound = *rc::gen::inRange<std::size_t>(3, 300);
  const std::string out = bounded_text(input, bound);
  RC_ASSERT(sqs_attribute_safe(out));
  RC_ASSERT(code_points(out) <= bound);
  RC_ASSERT(bounded_text(out, bound) == out);  // bounding twice changes nothing
  for (const char c : out) RC_ASSERT(static_cast<unsigned char>(c) >= 0x20);
}

TEST(SqsAttributeSafe, FollowsTheSqsAlphabet) {
  EXPECT_TRUE(sqs_attribute_safe("tab\tnl\ncr\r \xee\x80\x80 \xf0\x9f\x92\xb0"));
  EXPECT_FALSE(sqs_attribute_safe(std::string(1, '\x01')));
  EXPECT_FALSE(sqs_attribute_safe("\xef\xbf\xbe"));
  EXPECT_FALSE(sqs_attribute_safe("\xff"));
}

}  // namespace
}  // namespace ic
