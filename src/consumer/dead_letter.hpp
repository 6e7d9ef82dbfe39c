// The message attributes of a message forwarded to the dead-letter queue (docs/design.md §5).
#pragma once

#include <string_view>

#include "consumer/disposition.hpp"
#include "consumer/queue_port.hpp"

namespace ic::consumer {

inline constexpr std::size_t kMaxMessageAttributes = 10;  // SQS limit per message

// failureReason, failureDetail, <key_attribute> (when the key is known) and sourceMessageId,
// then the delivery's own attributes (so a redrive keeps them) as long as SQS's limit allows.
// SQS rejects empty attribute values, so an empty detail or key is left out.
[[nodiscard]] MessageAttributes dead_letter_attributes(const Message& message,
                                                       const consumer::DeadLetter& decision,
                                                       std::string_view key_attribute);

}  // namespace ic::consumer
