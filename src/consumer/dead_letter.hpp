// The message attributes of a message forwarded to the dead-letter queue (docs/design.md §5).
#pragma once

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "consumer/disposition.hpp"
#include "consumer/queue_port.hpp"

namespace ic::consumer {

inline constexpr std::size_t kMaxMessageAttributes = 10;  // SQS limit per message

// The attribute names of docs/design.md §5 "Forwarded messages": written here when a message is
// dead-lettered, read by `redrive`. The key's attribute is the handler's business key name
// (ListenerConfig::key_attribute), so it is not among them.
inline constexpr std::string_view kFailureReasonAttribute = "failureReason";
inline constexpr std::string_view kFailureDetailAttribute = "failureDetail";
inline constexpr std::string_view kSourceMessageIdAttribute = "sourceMessageId";

// How much a copy carries besides the unchanged body. SQS refuses a copy for good when it is
// too large (attributes count toward the message size limit); resending the same copy would
// fail on every delivery until SQS dead-letters the message itself, without a reason. So each
// refusal is followed by a smaller copy, in this order.
enum class DeadLetterCopy {
  Full,        // ours, then the producer's attributes within the limit
  OursOnly,    // none of the producer's: they may be what makes it too large
  ReasonOnly,  // failureReason and sourceMessageId: the body is within bytes of the limit
  // No attributes: the body alone fills the limit. Sent only once the reason is quarantined
  // (consumer/quarantine.hpp), so that the copy is never taken for one SQS dead-lettered.
  BodyOnly,
};
inline constexpr std::array<DeadLetterCopy, 4> kDeadLetterCopies = {
    DeadLetterCopy::Full, DeadLetterCopy::OursOnly, DeadLetterCopy::ReasonOnly,
    DeadLetterCopy::BodyOnly};

[[nodiscard]] std::string_view to_string(DeadLetterCopy copy);

// failureReason, failureDetail, <key_attribute> (when the key is known) and sourceMessageId,
// then the delivery's own attributes (so a redrive keeps them) as long as SQS's limit allows.
// SQS rejects empty attribute values, so an empty detail or key is left out. Our values pass
// through escape_bounded (core/escape_bounded.hpp): at most 256 characters, escaped into SQS's
// attribute alphabet, whatever the handler put in them.
[[nodiscard]] MessageAttributes dead_letter_attributes(const Message& message,
                                                       const consumer::DeadLetter& decision,
                                                       std::string_view key_attribute,
                                                       DeadLetterCopy copy = DeadLetterCopy::Full);

// The producer's attributes that `sent` does not carry as received: beyond the limit, left out
// by a smaller copy, or overridden by one of ours of the same name. Sorted by name.
[[nodiscard]] std::vector<std::string> dropped_producer_attributes(const Message& message,
                                                                   const MessageAttributes& sent);

}  // namespace ic::consumer
