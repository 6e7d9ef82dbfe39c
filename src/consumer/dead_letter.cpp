#include "consumer/dead_letter.hpp"

#include "core/text_escape.hpp"

namespace ic::consumer {

std::string_view to_string(DeadLetterCopy copy) {
  switch (copy) {
    case DeadLetterCopy::Full:
      return "full";
    case DeadLetterCopy::OursOnly:
      return "ours_only";
    case DeadLetterCopy::ReasonOnly:
      return "reason_only";
    case DeadLetterCopy::BodyOnly:
      return "body_only";
  }
  return "unknown";
}

MessageAttributes dead_letter_attributes(const Message& message,
                                         const consumer::DeadLetter& decision,
                                         std::string_view key_attribute, DeadLetterCopy copy) {
  MessageAttributes out;
  if (copy == DeadLetterCopy::BodyOnly) return out;
  const auto put = [&out](std::string_view name, const std::string& value) {
    if (!value.empty()) {
      out.insert_or_assign(std::string(name), MessageAttribute{"String", escape_bounded(value)});
    }
  };
  put(kFailureReasonAttribute, decision.reason);
  put(kSourceMessageIdAttribute, message.message_id);
  if (copy == DeadLetterCopy::ReasonOnly) return out;
  put(kFailureDetailAttribute, decision.detail);
  if (!key_attribute.empty()) put(key_attribute, decision.key);
  if (copy == DeadLetterCopy::OursOnly) return out;
  for (const auto& [name, attribute] : message.message_attributes) {
    if (out.size() >= kMaxMessageAttributes) break;
    out.try_emplace(name, attribute);  // ours win over a same-named original
  }
  return out;
}

std::vector<std::string> dropped_producer_attributes(const Message& message,
                                                     const MessageAttributes& sent) {
  std::vector<std::string> dropped;
  for (const auto& [name, attribute] : message.message_attributes) {
    const auto carried = sent.find(name);
    if (carried == sent.end() || carried->second != attribute) dropped.push_back(name);
  }
  return dropped;
}

}  // namespace ic::consumer
