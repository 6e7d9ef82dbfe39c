#include "application/operations/redrive_ledger.hpp"

#include <array>

#include "application/charge_event_decoder.hpp"
#include "consumer/dead_letter.hpp"

namespace ic::application {
namespace {

// What the consumer adds when it dead-letters (docs/design.md §5 "Forwarded messages").
constexpr std::array<std::string_view, 4> kConsumerAttributes = {
    consumer::kFailureReasonAttribute, consumer::kFailureDetailAttribute, kChargeIdField,
    consumer::kSourceMessageIdAttribute};

std::string_view string_attribute(const consumer::Message& message, std::string_view name) {
  auto it = message.message_attributes.find(name);
  return it == message.message_attributes.end() ? std::string_view{} : it->second.value;
}

}  // namespace

std::string_view failure_reason_of(const consumer::Message& message) {
  const std::string_view reason = string_attribute(message, consumer::kFailureReasonAttribute);
  return reason.empty() ? kNoReason : reason;
}

std::string_view failure_reason_of(const consumer::Message& message,
                                   std::string_view durable_reason) {
  const std::string_view reason = failure_reason_of(message);
  return reason == kNoReason && !durable_reason.empty() ? durable_reason : reason;
}

std::string charge_id_of(const consumer::Message& message) {
  if (auto id = string_attribute(message, kChargeIdField); !id.empty()) return std::string(id);
  auto id = parseable_charge_id(message.body);
  return id ? id->value() : std::string{};
}

consumer::MessageAttributes producer_attributes(const consumer::Message& message) {
  consumer::MessageAttributes out = message.message_attributes;
  for (std::string_view name : kConsumerAttributes) {
    if (auto it = out.find(name); it != out.end()) out.erase(it);
  }
  return out;
}

RedriveDecision RedriveLedger::decide(const consumer::Message& message,
                                      std::string_view durable_reason) {
  if (!seen_.insert(message.message_id).second) return RedriveDecision::Repeat;
  ++examined_;
  const std::string_view reason = failure_reason_of(message, durable_reason);
  Counts& counts = by_reason_[std::string(reason)];
  if (copies_.contains(string_attribute(message, consumer::kSourceMessageIdAttribute))) {
    ++counts.returned;
    return RedriveDecision::Returned;
  }
  if (reason != kNoReason && !rules_.reasons.contains(reason)) {
    ++counts.skipped;
    return RedriveDecision::Skip;
  }
  ++counts.moved;
  return RedriveDecision::Move;
}

std::size_t RedriveLedger::moved_count() const {
  std::size_t total = 0;
  for (const auto& [reason, counts] : by_reason_) total += counts.moved;
  return total;
}

nlohmann::json RedriveLedger::summary(bool dry_run) const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [reason, counts] : by_reason_) {
    out[reason] = {{dry_run ? "wouldMove" : "moved", counts.moved},
                   {dry_run ? "wouldSkip" : "skipped", counts.skipped},
                   {"returned", counts.returned}};
  }
  return out;
}

}  // namespace ic::application
