// What `redrive` decides per DLQ message, kept apart from the SQS calls so that the rules of
// docs/design.md §5 (which messages move, each at most once per run, what the copy carries)
// are unit-tested without a queue.
//
//   RedriveLedger ledger({.reasons = {"PREVIOUSLY_FAILED"}, .budget = depth_at_start});
//   for (auto& m : batch) switch (ledger.decide(m)) { case RedriveDecision::Move: ... }
#pragma once

#include <cstddef>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>

#include "consumer/queue_port.hpp"

namespace ic::application {

// The summary's label for messages SQS dead-lettered itself (no failureReason attribute).
inline constexpr std::string_view kNoReason = "NONE";

enum class RedriveDecision {
  Move,      // copy to the source queue, then delete from the DLQ
  Skip,      // its reason was not asked for: leave it in the DLQ
  Returned,  // a copy this run already moved came back: never moved twice in one run
  Repeat,    // this very message was already handled in this run (received again)
};

struct RedriveRules {
  // failureReasons opted in besides messages without one (`--reason`, repeatable).
  std::set<std::string, std::less<>> reasons;
  // Messages to examine at most: the DLQ's depth when the run started, so that a message
  // dead-lettered again during the run is never reached through the budget either.
  std::size_t budget = 0;
};

// Thread-safety: none; one per run. Ownership: copies what it keeps.
class RedriveLedger {
 public:
  explicit RedriveLedger(RedriveRules rules) : rules_(std::move(rules)) {}

  // Decides and counts one received DLQ message. `durable_reason`: the failureReason a
  // quarantine record keeps for a message that carries none (consumer/quarantine.hpp); it
  // counts as the message's own.
  [[nodiscard]] RedriveDecision decide(const consumer::Message& message,
                                       std::string_view durable_reason = {});
  // A copy was accepted by the source queue under `copy_id`: a DLQ message whose
  // sourceMessageId is that id is this message coming back.
  void moved(std::string copy_id) { copies_.insert(std::move(copy_id)); }
  // The budget is spent: every message that was in the DLQ at the start has been examined.
  [[nodiscard]] bool exhausted() const { return examined_ >= rules_.budget; }

  // {"<reason>": {"moved": n, "skipped": n, "returned": n}, ...}; a dry run, which moves
  // nothing, names its counts for what a run would do: {"wouldMove", "wouldSkip", "returned"}.
  [[nodiscard]] nlohmann::json summary(bool dry_run = false) const;
  [[nodiscard]] std::size_t moved_count() const;

 private:
  struct Counts {
    std::size_t moved = 0, skipped = 0, returned = 0;
  };
  RedriveRules rules_;
  std::size_t examined_ = 0;
  std::set<std::string, std::less<>> seen_;
  std::set<std::string, std::less<>> copies_;
  std::map<std::string, Counts, std::less<>> by_reason_;
};

// The message's failureReason, or kNoReason.
[[nodiscard]] std::string_view failure_reason_of(const consumer::Message& message);
// The message's failureReason, else `durable_reason` when given, else kNoReason.
[[nodiscard]] std::string_view failure_reason_of(const consumer::Message& message,
                                                 std::string_view durable_reason);
// The message's chargeId attribute, else the chargeId its body names when that parses.
[[nodiscard]] std::string charge_id_of(const consumer::Message& message);
// The producer's own attributes: the message's attributes without the ones the consumer adds
// when it dead-letters (failureReason, failureDetail, chargeId, sourceMessageId), so the copy
// starts clean and a later dead-lettering describes the new attempt only.
[[nodiscard]] consumer::MessageAttributes producer_attributes(const consumer::Message& message);

}  // namespace ic::application
