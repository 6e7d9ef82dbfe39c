// Canonical request pieces for SigV4; see sigv4_canonical.hpp for the rules.
#include "aws/sigv4/sigv4_canonical.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>
#include <vector>

#include "aws/protocol/uri_encode.hpp"
#include "core/hex.hpp"

namespace ic::aws::sigv4 {
namespace {

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// A '%' not followed by two hex digits is kept literally, so it is re-encoded as %25.
std::string percent_decode(std::string_view in) {
  std::string out;
  out.reserve(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (in[i] == '%' && i + 2 < in.size() && hex_value(in[i + 1]) >= 0 &&
        hex_value(in[i + 2]) >= 0) {
      out.push_back(static_cast<char>(hex_value(in[i + 1]) * 16 + hex_value(in[i + 2])));
      i += 2;
    } else {
      out.push_back(in[i]);
    }
  }
  return out;
}

bool is_space(char c) {
  return c == ' ' || c == '\t' || c == '\r' || c == '\n';
}

// Copies runs of non-space bytes in one append each: header values include session tokens of
// several hundred bytes, signed on every request.
std::string trim_all(std::string_view value) {
  std::string out;
  out.reserve(value.size());
  std::size_t pos = 0;
  while (pos < value.size()) {
    while (pos < value.size() && is_space(value[pos])) ++pos;
    std::size_t end = pos;
    while (end < value.size() && !is_space(value[end])) ++end;
    if (end == pos) break;
    if (!out.empty()) out.push_back(' ');
    out.append(value.substr(pos, end - pos));
    pos = end;
  }
  return out;
}

// ASCII only, locale-free: header names are tokens, and std::tolower is a libc call per byte.
std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

// botocore's list plus authorization: these change in transit or are the signature itself.
constexpr std::array<std::string_view, 5> kUnsigned = {
    "authorization", "expect", "transfer-encoding", "user-agent", "x-amzn-trace-id"};

}  // namespace

std::string canonical_uri(std::string_view path) {
  std::vector<std::string_view> segments;
  std::size_t start = 0;
  while (start <= path.size()) {
    const auto slash = std::min(path.find('/', start), path.size());
    const auto segment = path.substr(start, slash - start);
    if (segment == "..") {
      if (!segments.empty()) segments.pop_back();
    } else if (!segment.empty() && segment != ".") {
      segments.push_back(segment);
    }
    start = slash + 1;
  }
  std::string out = "/";
  for (std::size_t i = 0; i < segments.size(); ++i) {
    if (i > 0) out.push_back('/');
    out += uri_encode(segments[i], false);
  }
  if (!segments.empty() && path.ends_with('/')) out.push_back('/');
  return out;
}

std::string canonical_query(std::string_view query) {
  std::vector<std::pair<std::string, std::string>> params;
  std::size_t start = 0;
  while (start < query.size()) {
    const auto amp = std::min(query.find('&', start), query.size());
    const auto param = query.substr(start, amp - start);
    if (!param.empty()) {
      const auto eq = param.find('=');
      const auto name = param.substr(0, eq);
      const auto value = eq == std::string_view::npos ? std::string_view{} : param.substr(eq + 1);
      params.emplace_back(uri_encode(percent_decode(name), false),
                          uri_encode(percent_decode(value), false));
    }
    start = amp + 1;
  }
  std::ranges::sort(params);
  std::string out;
  for (const auto& [name, value] : params) {
    if (!out.empty()) out.push_back('&');
    out += name;
    out.push_back('=');
    out += value;
  }
  return out;
}

CanonicalHeaders canonical_headers(const http::Headers& headers) {
  // Stable sort keeps the request order of repeated names, which the signature depends on.
  std::vector<std::pair<std::string, std::string>> entries;
  entries.reserve(headers.size());
  for (const auto& [name, value] : headers) {
    auto lowered = lower(trim_all(name));
    if (std::ranges::find(kUnsigned, lowered) != kUnsigned.end()) continue;
    entries.emplace_back(std::move(lowered), trim_all(value));
  }
  std::ranges::stable_sort(entries, {}, &std::pair<std::string, std::string>::first);

  CanonicalHeaders out;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& [name, value] = entries[i];
    const bool repeat = i > 0 && entries[i - 1].first == name;
    if (repeat) {
      out.block.back() = ',';  // replaces the previous entry's '\n'
    } else {
      if (!out.signed_headers.empty()) out.signed_headers.push_back(';');
      out.signed_headers += name;
      out.block += name;
      out.block.push_back(':');
    }
    out.block += value;
    out.block.push_back('\n');
  }
  return out;
}

}  // namespace ic::aws::sigv4
