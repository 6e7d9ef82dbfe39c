#include "core/trace_context.hpp"

#include <algorithm>
#include <array>

#include "core/task_locals.hpp"

namespace ic {
namespace {

constexpr std::size_t kTraceIdDigits = 32;
constexpr std::size_t kParentIdDigits = 16;

// The only state: the header value, formatted once per scope rather than per log line, and
// kept per task (core/task_locals.hpp) so that interleaved deliveries keep their own.
std::string& current() {
  return task_locals().traceparent;
}

bool lower_hex(char c) {
  return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f');
}

bool lower_hex_of(std::string_view text, std::size_t digits) {
  return text.size() == digits && std::ranges::all_of(text, lower_hex);
}

bool all_zero(std::string_view text) {
  return std::ranges::all_of(text, [](char c) { return c == '0'; });
}

int hex_value(char c) {
  return c <= '9' ? c - '0' : c - 'a' + 10;
}

std::string folded(std::string_view text) {
  std::string out(text);
  for (char& c : out) {
    if (c >= 'A' && c <= 'F') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

std::optional<TraceContext> valid(std::string trace_id, std::string parent_id, std::uint8_t flags) {
  if (!lower_hex_of(trace_id, kTraceIdDigits) || all_zero(trace_id)) return std::nullopt;
  if (!lower_hex_of(parent_id, kParentIdDigits) || all_zero(parent_id)) return std::nullopt;
  return TraceContext{std::move(trace_id), std::move(parent_id), flags};
}

}  // namespace

std::string TraceContext::traceparent() const {
  constexpr std::array<char, 16> kDigits{'0', '1', '2', '3', '4', '5', '6', '7',
                                         '8', '9', 'a', 'b', 'c', 'd', 'e', 'f'};
  std::string out = "00-";
  out.append(trace_id).append("-").append(parent_id).append("-");
  out.push_back(kDigits.at(static_cast<std::size_t>(flags >> 4)));
  out.push_back(kDigits.at(static_cast<std::size_t>(flags & 0x0f)));
  return out;
}

std::optional<TraceContext> parse_traceparent(std::string_view text) noexcept {
  try {
    // 2 + 1 + 32 + 1 + 16 + 1 + 2
    if (text.size() != 55 || !text.starts_with("00-") || text[35] != '-' || text[52] != '-') {
      return std::nullopt;
    }
    const std::string_view flags = text.substr(53, 2);
    if (!lower_hex_of(flags, 2)) return std::nullopt;
    return valid(std::string(text.substr(3, kTraceIdDigits)),
                 std::string(text.substr(36, kParentIdDigits)),
                 static_cast<std::uint8_t>(hex_value(flags[0]) * 16 + hex_value(flags[1])));
  } catch (...) {  // only std::bad_alloc can get here
    return std::nullopt;
  }
}

std::optional<TraceContext> parse_aws_trace_header(std::string_view text) noexcept {
  try {
    std::optional<std::string> root;
    std::optional<std::string> parent;
    std::optional<std::string_view> sampled;
    while (!text.empty()) {
      const auto end = text.find(';');
      const std::string_view field = text.substr(0, end);
      text = end == std::string_view::npos ? std::string_view{} : text.substr(end + 1);
      const auto eq = field.find('=');
      if (eq == std::string_view::npos) return std::nullopt;
      const std::string_view name = field.substr(0, eq);
      const std::string_view value = field.substr(eq + 1);
      if (name == "Root") {
        // 1-<8hex epoch seconds>-<24hex random>
        if (root || value.size() != 35 || !value.starts_with("1-") || value[10] != '-') {
          return std::nullopt;
        }
        root = folded(value.substr(2, 8)) + folded(value.substr(11, 24));
      } else if (name == "Parent") {
        if (parent) return std::nullopt;
        parent = folded(value);
      } else if (name == "Sampled") {
        if (sampled || (value != "0" && value != "1" && value != "?")) return std::nullopt;
        sampled = value;
      }
    }
    if (!root || !parent) return std::nullopt;
    return valid(std::move(*root), std::move(*parent), sampled == "1" ? 0x01 : 0x00);
  } catch (...) {  // only std::bad_alloc can get here
    return std::nullopt;
  }
}

TraceScope::TraceScope(std::optional<TraceContext> context) : previous_(std::move(current())) {
  current() = context ? context->traceparent() : std::string();
}

TraceScope::~TraceScope() {
  current() = std::move(previous_);
}

std::string_view current_traceparent() noexcept {
  return current();
}

}  // namespace ic
