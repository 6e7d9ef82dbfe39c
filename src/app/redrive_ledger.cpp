#include "app/redrive_ledger.hpp"

#include <array>

#include "application/charge_event_decoder.hpp"

namespace ic::app {
namespace {

// The attributes of docs/design.md §5 "Forwarded messages".
constexpr std::string_view kFailureReason = "failureReason";
constexpr std::string_view kSourceMessageId = "sourceMessageId";
constexpr std::string_view kChargeId = "chargeId";
constexpr std::array<std::string_view, 4> kConsumerAttributes = {kFailureReason, "failureDetail",
                                                                 kChargeId, kSourceMessageId};

std::string_view string_attribute(const consumer::Message& message, std::string_view name) {
  auto it = message.message_attributes.find(name);
  return it == message.message_attributes.end() ? std::string_view{} : it->second.value;
}

}  // namespace

std::string_view failure_reason_of(const consumer::Message& message) {
  const std::string_view reason = string_attribute(message, kFailureReason);
  return reason.empty() ? kNoReason : reason;
}

std::string charge_id_of(const consumer::Message& message) {
  if (auto id = string_attribute(message, kChargeId); !id.empty()) return std::string(id);
  auto id = application::parseable_charge_id(message.body);
  return id ? id->value() : std::string{};
}

consumer::MessageAttributes producer_attributes(const consumer::Message& message) {
  consumer::MessageAttributes out = message.message_attributes;
  for (std::string_view name : kConsumerAttributes) {
    if (auto it = out.find(name); it != out.end()) out.erase(it);
  }
  return out;
}

RedriveDecision RedriveLedger::decide(const consumer::Message& message) {
  if (!seen_.insert(message.message_id).second) return RedriveDecision::Repeat;
  ++examined_;
  const std::string_view reason = failure_reason_of(message);
  Counts& counts = by_reason_[std::string(reason)];
  if (copies_.contains(string_attribute(message, kSourceMessageId))) {
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

nlohmann::json RedriveLedger::summary() const {
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [reason, counts] : by_reason_) {
    out[reason] = {
        {"moved", counts.moved}, {"skipped", counts.skipped}, {"returned", counts.returned}};
  }
  return out;
}

}  // namespace ic::app
