// The durable reason of a message no DLQ copy could carry it for (docs/design.md §5 "Sizes"):
// a body within bytes of the DLQ's MaximumMessageSize leaves no room for failureReason. The
// record is keyed by the SHA-256 of the body, the one thing every copy of the message keeps:
// the body-only copy the consumer sends gets a new message id, and a message SQS's redrive
// policy moves keeps its own; `redrive` finds the record either way.
//
//   quarantine.put({.body_sha256 = sha256_hex(body), .failure_reason = "INVALID_MESSAGE", ...});
//   auto found = quarantine.find(sha256_hex(dlq_message.body));  // nullopt: none recorded
#pragma once

#include <expected>
#include <optional>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "core/task.hpp"
#include "core/time.hpp"

namespace ic::consumer {

struct QuarantineRecord {
  std::string body_sha256;  // lower-case hex
  std::string failure_reason;
  std::string failure_detail;     // may be empty
  std::string source_message_id;  // the last delivery quarantined
  Instant at{};                   // stamped by the store when it writes
  friend bool operator==(const QuarantineRecord&, const QuarantineRecord&) = default;
};

// Thread-safety: each method returns a task awaited at once on an event loop's thread
// (event::run_blocking for the operator commands); calls may be in flight concurrently. One
// round trip each.
class QuarantinePort {
 public:
  virtual ~QuarantinePort() = default;
  // Idempotent: the same body quarantined again overwrites the record.
  [[nodiscard]] virtual Task<std::expected<void, Error>> put(const QuarantineRecord& record) = 0;
  [[nodiscard]] virtual Task<std::expected<std::optional<QuarantineRecord>, Error>> find(
      std::string_view body_sha256) = 0;
};

}  // namespace ic::consumer
