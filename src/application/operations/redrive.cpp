// redrive: moves dead-lettered messages back to the source queue, body and producer attributes
// unchanged. A message leaves the DLQ only after the source queue has accepted its copy, so a
// crash mid-way duplicates at worst, and duplicates are what the consumer is built to absorb.
//
// It cannot loop (docs/design.md §5): by default only messages SQS dead-lettered itself move
// (transient failures that ran out of receives); a deterministic reason must be asked for, and
// that includes one only a quarantine record keeps (the DLQ copy could not carry it). The
// run examines at most the DLQ's depth at its start, never moves a message twice, and never
// moves a copy of its own that came back.
#include <fmt/format.h>

#include <algorithm>

#include "application/operations/commands.hpp"
#include "application/operations/redrive_ledger.hpp"
#include "core/sha256.hpp"
#include "event/run_blocking.hpp"

namespace ic::application {
namespace {

using namespace std::chrono_literals;

// Messages left in the DLQ become visible again at once, so a later run (or a look with the
// console) need not wait out the DLQ's visibility timeout.
void hand_back(DeadLetterQueue& dlq, Console& console,
               const std::vector<consumer::VisibilityEntry>& left) {
  for (std::size_t start = 0; start < left.size(); start += consumer::kMaxBatchEntries) {
    const auto chunk =
        std::span(left).subspan(start, std::min(consumer::kMaxBatchEntries, left.size() - start));
    if (auto reply = dlq.change_visibility_batch(chunk); !reply) {
      console.note(fmt::format(
          "redrive: could not make {} skipped messages visible again ({} {}); they reappear "
          "after the DLQ's visibility timeout",
          chunk.size(), reply.error().code, reply.error().message));
    }
  }
}

void list_entry(Console& console, std::string_view event, const consumer::Message& message,
                std::string_view durable_reason, Instant now) {
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(now - message.sent_at);
  nlohmann::json entry{{"event", event},
                       {"reason", failure_reason_of(message, durable_reason)},
                       {"chargeId", charge_id_of(message)},
                       {"ageSeconds", age.count()},
                       {"messageId", message.message_id}};
  if (!durable_reason.empty()) entry["quarantined"] = true;
  console.result(entry.dump());
}

// The reason a quarantine record keeps for a message that carries none; empty when there is
// none (or the message carries its own, which needs no look-up).
std::expected<std::string, Error> durable_reason_of(consumer::QuarantinePort* quarantine,
                                                    const consumer::Message& message) {
  if (quarantine == nullptr || failure_reason_of(message) != kNoReason) return std::string{};
  auto record = event::run_blocking(quarantine->find(sha256_hex(message.body)));
  if (!record) return std::unexpected(record.error());
  return *record ? (*record)->failure_reason : std::string{};
}

}  // namespace

int redrive(DeadLetterQueue& dlq, SourceQueue& source, const Clock& clock, Console& console,
            const RedriveRequest& request, consumer::QuarantinePort* quarantine) {
  auto depth = dlq.visible_depth();
  if (!depth) {
    console.note(fmt::format("redrive: reading the DLQ's depth failed: {} {}", depth.error().code,
                             depth.error().message));
    return 1;
  }
  RedriveLedger ledger({.reasons = request.reasons, .budget = *depth});
  std::vector<consumer::VisibilityEntry> left;
  const auto done = [&] {
    return ledger.exhausted() ||
           (request.max_messages &&
            ledger.moved_count() >= static_cast<std::size_t>(*request.max_messages));
  };
  bool failed = false;
  while (!done() && !failed) {
    auto batch = dlq.receive(consumer::kMaxReceiveMessages, 1s);
    if (!batch) {
      console.note(fmt::format("redrive: receive from DLQ failed: {} {}", batch.error().code,
                               batch.error().message));
      failed = true;
      break;
    }
    if (batch->empty()) break;
    for (const consumer::Message& message : *batch) {
      const consumer::VisibilityEntry keep{message.message_id, message.receipt_handle, 0s};
      if (done()) {
        left.push_back(keep);
        continue;
      }
      // Without its reason a quarantined message would pass for one SQS dead-lettered and move
      // by default; a failed look-up therefore moves nothing more.
      auto durable = durable_reason_of(quarantine, message);
      if (!durable) {
        console.note(fmt::format("redrive: reading the quarantine record of {} failed: {} {}",
                                 message.message_id, durable.error().code,
                                 durable.error().message));
        left.push_back(keep);
        failed = true;
        break;
      }
      const RedriveDecision decision = ledger.decide(message, *durable);
      if (request.dry_run) {
        if (decision == RedriveDecision::Move || decision == RedriveDecision::Skip) {
          list_entry(console, decision == RedriveDecision::Move ? "would move" : "would skip",
                     message, *durable, clock.now());
        }
        left.push_back(keep);
        continue;
      }
      if (decision != RedriveDecision::Move) {
        left.push_back(keep);
        continue;
      }
      auto sent = source.send(message.body, producer_attributes(message));
      if (!sent) {
        console.note(fmt::format("redrive: send of {} failed: {} {}", message.message_id,
                                 sent.error().code, sent.error().message));
        left.push_back(keep);
        failed = true;
        break;
      }
      ledger.moved(*sent);
      const consumer::DeleteEntry entry{message.message_id, message.receipt_handle};
      auto deleted = dlq.delete_batch(std::span(&entry, 1));
      if (!deleted || !deleted->front()) {
        console.note(fmt::format(
            "redrive: {} was copied but not deleted from the DLQ; the next run skips nothing "
            "and moves it again (harmless)",
            message.message_id));
      }
    }
  }
  hand_back(dlq, console, left);
  console.result(nlohmann::json{{"event", "redrive summary"},
                                {"dryRun", request.dry_run},
                                {"dlqDepthAtStart", *depth},
                                {"byReason", ledger.summary(request.dry_run)}}
                     .dump());
  if (failed) return 1;
  // A dry run moved nothing: it says how many a run would move, under its own event name.
  console.result(nlohmann::json{{"event", request.dry_run ? "would redrive" : "redriven"},
                                {"messages", ledger.moved_count()}}
                     .dump());
  return 0;
}

}  // namespace ic::application
