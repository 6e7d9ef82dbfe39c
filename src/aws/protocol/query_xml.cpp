#include "aws/protocol/query_xml.hpp"

#include <expat.h>
#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <vector>

namespace ic::aws {
namespace {

constexpr std::size_t kMaxInputBytes = 1024 * 1024;
constexpr std::size_t kMaxDepth = 32;
constexpr std::size_t kMaxFieldBytes = 64 * 1024;

struct ParserDeleter {
  void operator()(XML_Parser parser) const { XML_ParserFree(parser); }
};

// What the callbacks share: the element path so far and the fields being collected.
struct Walk {
  XML_Parser parser = nullptr;
  std::vector<std::string_view> wanted;
  std::string path;                              // "A/B/C" of the open elements
  std::vector<std::size_t> path_ends;            // where each open element's segment starts
  const std::string_view* open_field = nullptr;  // the wanted element we are inside, if any
  std::size_t open_field_depth = 0;
  XmlFields fields;
  std::string failure;  // set before stopping the parser

  void fail(std::string reason) {
    if (failure.empty()) failure = std::move(reason);
    XML_StopParser(parser, XML_FALSE);
  }
};

std::string_view local_name(const XML_Char* name) {
  std::string_view text(name);
  if (const auto colon = text.rfind(':'); colon != std::string_view::npos) {
    text.remove_prefix(colon + 1);
  }
  return text;
}

// After a failure expat may still deliver a callback or two; they are ignored.
void on_start(void* user, const XML_Char* name, const XML_Char** /*attributes*/) {
  auto& walk = *static_cast<Walk*>(user);
  if (!walk.failure.empty()) return;
  if (walk.path_ends.size() >= kMaxDepth) return walk.fail("XML nested too deeply");
  if (walk.open_field != nullptr) {
    return walk.fail(fmt::format("XML element {} is not a text element", *walk.open_field));
  }
  walk.path_ends.push_back(walk.path.size());
  if (!walk.path.empty()) walk.path += '/';
  walk.path += local_name(name);
  const auto it = std::ranges::find(walk.wanted, std::string_view(walk.path));
  if (it == walk.wanted.end()) return;
  if (walk.fields.contains(*it)) {
    return walk.fail(fmt::format("XML element {} is given more than once", *it));
  }
  walk.fields.emplace(std::string(*it), std::string{});
  walk.open_field = &*it;
  walk.open_field_depth = walk.path_ends.size();
}

void on_end(void* user, const XML_Char* /*name*/) {
  auto& walk = *static_cast<Walk*>(user);
  if (!walk.failure.empty() || walk.path_ends.empty()) return;
  if (walk.open_field != nullptr && walk.open_field_depth == walk.path_ends.size()) {
    walk.open_field = nullptr;
  }
  walk.path.resize(walk.path_ends.back());
  walk.path_ends.pop_back();
}

void on_text(void* user, const XML_Char* text, int length) {
  auto& walk = *static_cast<Walk*>(user);
  if (!walk.failure.empty() || walk.open_field == nullptr) return;
  auto& value = walk.fields.find(*walk.open_field)->second;
  if (value.size() + static_cast<std::size_t>(length) > kMaxFieldBytes) {
    return walk.fail(fmt::format("XML element {} is too long", *walk.open_field));
  }
  value.append(text, static_cast<std::size_t>(length));
}

void on_doctype(void* user, const XML_Char*, const XML_Char*, const XML_Char*, int) {
  static_cast<Walk*>(user)->fail("XML with a DOCTYPE is refused");
}

}  // namespace

std::expected<XmlFields, std::string> read_xml_fields(
    std::string_view xml, std::initializer_list<std::string_view> paths) {
  if (xml.size() > kMaxInputBytes) return std::unexpected("XML reply larger than 1 MiB");
  const std::unique_ptr<XML_ParserStruct, ParserDeleter> parser(XML_ParserCreate("UTF-8"));
  if (!parser) return std::unexpected("XML parser could not be created");
  Walk walk{.parser = parser.get(), .wanted = paths};
  XML_SetUserData(parser.get(), &walk);
  XML_SetElementHandler(parser.get(), on_start, on_end);
  XML_SetCharacterDataHandler(parser.get(), on_text);
  XML_SetStartDoctypeDeclHandler(parser.get(), on_doctype);
  const auto status = XML_Parse(parser.get(), xml.data(), static_cast<int>(xml.size()), XML_TRUE);
  if (!walk.failure.empty()) return std::unexpected(std::move(walk.failure));
  if (status != XML_STATUS_OK) {
    // The error names the position only: expat's text is generic, but the input is not ours.
    return std::unexpected(fmt::format("malformed XML at byte {} ({})",
                                       XML_GetCurrentByteIndex(parser.get()),
                                       XML_ErrorString(XML_GetErrorCode(parser.get()))));
  }
  return std::move(walk.fields);
}

}  // namespace ic::aws
