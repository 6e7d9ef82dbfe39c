// JsonWriter writes what nlohmann-json would write for the same document, byte for byte, for
// any string at all (ill-formed UTF-8 included), so the request bodies it replaces are
// unchanged on the wire.
#include "aws/protocol/json_writer.hpp"

#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace ic::aws {
namespace {

using nlohmann::json;

std::string nlohmann_dump(const json& document) {
  return document.dump(-1, ' ', false, json::error_handler_t::replace);
}

std::string written(std::string_view text) {
  JsonWriter writer;
  writer.value(text);
  return std::move(writer).take();
}

TEST(JsonWriter, NestedObjectsAndScalars) {
  JsonWriter writer;
  writer.begin_object()
      .member("TableName", "t")
      .key("Key")
      .begin_object()
      .key("pk")
      .begin_object()
      .member("S", "CHG-1")
      .end_object()
      .end_object()
      .key("ConsistentRead")
      .value(true)
      .key("Empty")
      .begin_object()
      .end_object()
      .key("No")
      .value(false)
      .end_object();
  EXPECT_EQ(
      std::move(writer).take(),
      R"({"TableName":"t","Key":{"pk":{"S":"CHG-1"}},"ConsistentRead":true,"Empty":{},"No":false})");
}

TEST(JsonWriter, EscapesAsNlohmannDoes) {
  for (const std::string& text :
       {std::string("plain"), std::string("quote \" and \\ backslash"),
        std::string("\b\f\n\r\t\x01\x1f\x7f"), std::string("\0nul", 4),
        std::string("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x92\xB8"),
        std::string("\xC0\x80 \xE0\x80 \xED\xA0\x80 \xF4\x90\x80\x80 \xFF"),
        std::string("cut \xE2\x82"), std::string("\xF0\x9F\x92")}) {
    EXPECT_EQ(written(text), nlohmann_dump(text))
        << json(text).dump(-1, ' ', true, json::error_handler_t::replace);
  }
}

// Bytes around every boundary of the UTF-8 grammar and the escapes, so that generated strings
// are mostly the interesting cases rather than plain ASCII.
const std::vector<char> kEdgeBytes = {'a',    '"',    '\\',   '\0',   '\x1f', '\x7f', '\x80',
                                      '\x8f', '\x90', '\x9f', '\xa0', '\xbf', '\xc0', '\xc1',
                                      '\xc2', '\xdf', '\xe0', '\xe1', '\xec', '\xed', '\xee',
                                      '\xef', '\xf0', '\xf1', '\xf3', '\xf4', '\xf5', '\xff'};

RC_GTEST_PROP(JsonWriterProperty, AnyStringIsWrittenAsNlohmannWritesIt, ()) {
  const auto text =
      *rc::gen::oneOf(rc::gen::arbitrary<std::string>(),
                      rc::gen::container<std::string>(rc::gen::elementOf(kEdgeBytes)));
  RC_ASSERT(written(text) == nlohmann_dump(text));
}

RC_GTEST_PROP(JsonWriterProperty, ObjectsAreTheDocumentNlohmannWouldWrite, ()) {
  const auto members = *rc::gen::container<std::vector<std::pair<std::string, std::string>>>(
      rc::gen::pair(rc::gen::arbitrary<std::string>(), rc::gen::arbitrary<std::string>()));
  JsonWriter writer;
  writer.begin_object();
  std::string expected = "{";
  for (const auto& [name, text] : members) {
    writer.member(name, text);
    if (expected.size() > 1) expected += ',';
    expected += nlohmann_dump(name) + ':' + nlohmann_dump(text);
  }
  writer.end_object();
  expected += '}';
  const std::string body = std::move(writer).take();
  RC_ASSERT(body == expected);
  RC_ASSERT(!json::parse(body, nullptr, false).is_discarded());
}

}  // namespace
}  // namespace ic::aws
