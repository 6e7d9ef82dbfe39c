// redrive: moves dead-lettered messages back to the source queue, body and producer attributes
// unchanged. A message leaves the DLQ only after the source queue has accepted its copy, so a
// crash mid-way duplicates at worst, and duplicates are what the consumer is built to absorb.
//
// It cannot loop (docs/design.md §5): by default only messages SQS dead-lettered itself move
// (transient failures that ran out of receives); a deterministic reason must be asked for. The
// run examines at most the DLQ's depth at its start, never moves a message twice, and never
// moves a copy of its own that came back.
#include <fmt/format.h>

#include <charconv>
#include <iostream>
#include <nlohmann/json.hpp>

#include "app/admin_commands.hpp"
#include "app/redrive_ledger.hpp"

namespace ic::app {
namespace {

using namespace std::chrono_literals;

// The DLQ's visible messages now: the run's budget.
std::expected<std::size_t, Error> visible_depth(sqs::SqsClient& client, std::string_view url) {
  auto attributes = client.get_queue_attributes(url, {"ApproximateNumberOfMessages"});
  if (!attributes) return std::unexpected(attributes.error());
  auto it = attributes->find("ApproximateNumberOfMessages");
  std::size_t depth = 0;
  if (it == attributes->end() ||
      std::from_chars(it->second.data(), it->second.data() + it->second.size(), depth).ec !=
          std::errc{}) {
    return std::unexpected(Error{.error_class = ErrorClass::Retryable,
                                 .code = "MalformedReply",
                                 .message = "no ApproximateNumberOfMessages for the DLQ"});
  }
  return depth;
}

// Messages left in the DLQ become visible again at once, so a later run (or a look with the
// console) need not wait out the DLQ's visibility timeout.
void hand_back(sqs::SqsClient& client, std::string_view dlq_url,
               const std::vector<consumer::VisibilityEntry>& left) {
  for (std::size_t start = 0; start < left.size(); start += consumer::kMaxBatchEntries) {
    const auto chunk =
        std::span(left).subspan(start, std::min(consumer::kMaxBatchEntries, left.size() - start));
    if (auto reply = client.change_visibility_batch(dlq_url, chunk); !reply) {
      std::cerr << fmt::format(
          "redrive: could not make {} skipped messages visible again ({} {}); they reappear "
          "after the DLQ's visibility timeout\n",
          chunk.size(), reply.error().code, reply.error().message);
    }
  }
}

void list_entry(std::string_view event, const consumer::Message& message, Instant now) {
  const auto age = std::chrono::duration_cast<std::chrono::seconds>(now - message.sent_at);
  std::cout << nlohmann::json{{"event", event},
                              {"reason", failure_reason_of(message)},
                              {"chargeId", charge_id_of(message)},
                              {"ageSeconds", age.count()},
                              {"messageId", message.message_id}}
                   .dump()
            << "\n";
}

}  // namespace

int redrive(AwsStack& aws, const RedriveOptions& options) {
  sqs::SqsClient& client = aws.sqs();
  auto depth = visible_depth(client, options.dlq_url);
  if (!depth) {
    std::cerr << fmt::format("redrive: reading the DLQ's depth failed: {} {}\n", depth.error().code,
                             depth.error().message);
    return 1;
  }
  RedriveLedger ledger({.reasons = options.reasons, .budget = *depth});
  std::vector<consumer::VisibilityEntry> left;
  const auto done = [&] {
    return ledger.exhausted() ||
           (options.max_messages &&
            ledger.moved_count() >= static_cast<std::size_t>(*options.max_messages));
  };
  bool failed = false;
  while (!done() && !failed) {
    auto batch = client.receive(options.dlq_url, consumer::kMaxReceiveMessages, 1s);
    if (!batch) {
      std::cerr << fmt::format("redrive: receive from DLQ failed: {} {}\n", batch.error().code,
                               batch.error().message);
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
      const RedriveDecision decision = ledger.decide(message);
      if (options.dry_run) {
        if (decision == RedriveDecision::Move || decision == RedriveDecision::Skip) {
          list_entry(decision == RedriveDecision::Move ? "would move" : "would skip", message,
                     real_clock().now());
        }
        left.push_back(keep);
        continue;
      }
      if (decision != RedriveDecision::Move) {
        left.push_back(keep);
        continue;
      }
      auto sent = client.send(options.queue_url,
                              {.body = message.body, .attributes = producer_attributes(message)});
      if (!sent) {
        std::cerr << fmt::format("redrive: send of {} failed: {} {}\n", message.message_id,
                                 sent.error().code, sent.error().message);
        left.push_back(keep);
        failed = true;
        break;
      }
      ledger.moved(*sent);
      const consumer::DeleteEntry entry{message.message_id, message.receipt_handle};
      auto deleted = client.delete_batch(options.dlq_url, std::span(&entry, 1));
      if (!deleted || !deleted->front()) {
        std::cerr << fmt::format(
            "redrive: {} was copied but not deleted from the DLQ; the next run skips nothing "
            "and moves it again (harmless)\n",
            message.message_id);
      }
    }
  }
  hand_back(client, options.dlq_url, left);
  std::cout << nlohmann::json{{"event", "redrive summary"},
                              {"dryRun", options.dry_run},
                              {"dlqDepthAtStart", *depth},
                              {"byReason", ledger.summary()}}
                   .dump()
            << "\n";
  if (failed) return 1;
  const std::size_t moved = options.dry_run ? 0 : ledger.moved_count();
  std::cout << nlohmann::json{{"event", "redriven"}, {"messages", moved}}.dump() << "\n";
  return 0;
}

}  // namespace ic::app
