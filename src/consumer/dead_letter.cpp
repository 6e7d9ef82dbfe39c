#include "consumer/dead_letter.hpp"

namespace ic::consumer {

MessageAttributes dead_letter_attributes(const Message& message,
                                         const consumer::DeadLetter& decision,
                                         std::string_view key_attribute) {
  MessageAttributes out;
  const auto put = [&out](std::string_view name, const std::string& value) {
    if (!value.empty()) out.insert_or_assign(std::string(name), MessageAttribute{"String", value});
  };
  put("failureReason", decision.reason);
  put("failureDetail", decision.detail);
  if (!key_attribute.empty()) put(key_attribute, decision.key);
  put("sourceMessageId", message.message_id);
  for (const auto& [name, attribute] : message.message_attributes) {
    if (out.size() >= kMaxMessageAttributes) break;
    out.try_emplace(name, attribute);  // ours win over a same-named original
  }
  return out;
}

}  // namespace ic::consumer
