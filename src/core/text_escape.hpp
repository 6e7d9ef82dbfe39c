// Text that came from outside the process (a message body, a key a producer chose, a reply),
// made fit to travel in an SQS message attribute or a log field: bounded, and escaped so that
// no input byte is copied through unless it is an ordinary printable character.
//
//   attributes["failureDetail"] = escape_bounded(detail);   // at most 256 characters
//   // "\u0001\u001bkey: must not be given..." for a key holding U+0001 and ESC
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace ic {

inline constexpr std::size_t kMaxDetailChars = 256;

// Keeps printable code points of well-formed UTF-8 (U+0020..U+007E, and U+00A0 and above
// except surrogates, U+FFFE and U+FFFF), writes every other code point as \uXXXX (or
// \U00XXXXXX) and every byte of malformed UTF-8 as \xXX, so the result is within SQS's
// attribute alphabet (#x9 | #xA | #xD | #x20-#xD7FF | #xE000-#xFFFD | #x10000-#x10FFFF). At most
// `max_chars` code points: a longer result ends in "..." and never splits an escape.
// `max_chars` below 3 is raised to 3. A backslash is kept as it is, so that bounding text that
// is already bounded (a detail built from an escaped key) changes nothing.
[[nodiscard]] std::string escape_bounded(std::string_view text,
                                         std::size_t max_chars = kMaxDetailChars);

// True when `text` is well-formed UTF-8 of XML 1.0 characters only (the Char production), the
// alphabet SQS allows in attribute values: the check the fuzz targets and tests apply to
// escape_bounded's output.
[[nodiscard]] bool xml_chars_only(std::string_view text);

}  // namespace ic
