// What a handler decided for one delivery; the queue container turns it into queue actions.
// Generic: the container knows these three shapes and nothing about the business.
#pragma once

#include <string>
#include <variant>

#include "core/time.hpp"

namespace ic::consumer {

// Delete the message: its effect is recorded (or it needs no effect).
struct Ack {};

// Leave the message on the queue and make it visible again after `after` (the container adds
// jitter and rounds to the queue's granularity). `reason` is a metric label, e.g. "in_progress".
struct RetryLater {
  Millis after{};
  std::string reason;
};

// Forward the original body to the dead-letter queue with these attributes, then delete it.
struct DeadLetter {
  std::string reason;  // failureReason, e.g. PAYLOAD_MISMATCH
  std::string detail;  // failureDetail, human-readable
  std::string key;     // business key when known (chargeId attribute), else empty
};

using Disposition = std::variant<Ack, RetryLater, DeadLetter>;

}  // namespace ic::consumer
