// W3C Trace Context (traceparent) carried from a producer through one charge: parsed from the
// message's `traceparent` attribute or converted from its X-Ray AWSTraceHeader, made current
// in the handling task by a TraceScope, and read by the logger and the bank calls. No spans
// are recorded or exported: propagation and log correlation only (docs/design.md §5).
//
//   const TraceScope scope(parse_traceparent(attribute));
//   current_traceparent();  // "00-<trace-id>-<parent-id>-<flags>", or "" outside a scope
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace ic {

struct TraceContext {
  std::string trace_id;    // 32 lower-case hex digits, not all zero
  std::string parent_id;   // 16 lower-case hex digits, not all zero
  std::uint8_t flags = 0;  // bit 0: sampled

  // "00-<trace-id>-<parent-id>-<flags>", the header value.
  [[nodiscard]] std::string traceparent() const;
  friend bool operator==(const TraceContext&, const TraceContext&) = default;
};

// Version 00 only, exactly "00-" 32hex "-" 16hex "-" 2hex in lower case (W3C Trace Context
// level 1); an all-zero id or anything else is nullopt. A producer's malformed header must
// not fail a charge, so nothing here throws.
[[nodiscard]] std::optional<TraceContext> parse_traceparent(std::string_view text) noexcept;

// "Root=1-<8hex>-<24hex>;Parent=<16hex>;Sampled=0|1|?" in any order, other fields (Lineage,
// Self) ignored: trace-id is the 8+24 digits, parent-id is Parent, flags 01 when Sampled=1.
// Root and Parent are required (no valid traceparent exists without a parent-id); a field
// given twice, a bad value or an all-zero id is nullopt. Hex may be in either case.
[[nodiscard]] std::optional<TraceContext> parse_aws_trace_header(std::string_view text) noexcept;

// Makes `context` current in this task (core/task_locals.hpp) until destroyed (restoring what was
// current before); nullopt makes no context current. Not movable: it lives on the handler's stack.
class TraceScope {
 public:
  explicit TraceScope(std::optional<TraceContext> context);
  ~TraceScope();
  TraceScope(const TraceScope&) = delete;
  TraceScope& operator=(const TraceScope&) = delete;

 private:
  std::string previous_;
};

// The current context's header value; empty outside a scope. Valid until the scope ends.
[[nodiscard]] std::string_view current_traceparent() noexcept;

}  // namespace ic
