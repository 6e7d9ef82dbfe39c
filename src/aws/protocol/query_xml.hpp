// Reads the few text fields a caller needs out of an AWS query-protocol XML reply (STS), e.g.
//
//   auto fields = read_xml_fields(body, {{"ErrorResponse/Error/Code"}});
//   if (fields) code = (*fields)["ErrorResponse/Error/Code"];
//
// A path is the chain of element local names from the root, '/'-separated; namespace prefixes
// are ignored. Any reply shape -- malformed, hostile or merely unexpected -- gives a value: the
// wanted fields found, or a one-line reason that never quotes the input (the reply may carry
// the very secret being fetched). Parsed with expat, which is fuzzed upstream.
#pragma once

#include <expected>
#include <initializer_list>
#include <map>
#include <string>
#include <string_view>

namespace ic::aws {

using XmlFields = std::map<std::string, std::string, std::less<>>;

// Limits: at most 1 MiB of input, 32 levels of nesting and 64 KiB of text per wanted field.
// Refused: a DOCTYPE (so no entity can be declared, let alone expanded), a wanted element
// given twice (which one would win is a guess), a wanted element with child elements. Wanted
// elements that are absent are simply not in the result.
[[nodiscard]] std::expected<XmlFields, std::string> read_xml_fields(
    std::string_view xml, std::initializer_list<std::string_view> paths);

}  // namespace ic::aws
