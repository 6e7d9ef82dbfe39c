// redrive: moves dead-lettered messages back to the source queue, body unchanged. A message
// leaves the DLQ only after the source queue has accepted its copy, so a crash mid-way
// duplicates at worst, and duplicates are what the consumer is built to absorb.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "app/admin_commands.hpp"

namespace ic::app {

int redrive(AwsStack& aws, const RedriveOptions& options) {
  sqs::SqsClient& client = aws.sqs();
  int moved = 0;
  while (!options.max_messages || moved < *options.max_messages) {
    const int want = options.max_messages ? std::min(10, *options.max_messages - moved) : 10;
    auto batch = client.receive(options.dlq_url, want, std::chrono::seconds(1));
    if (!batch) {
      std::cerr << fmt::format("redrive: receive from DLQ failed: {} {}\n", batch.error().code,
                               batch.error().message);
      return 1;
    }
    if (batch->empty()) break;
    for (const consumer::Message& message : *batch) {
      // The failure attributes described the last attempt; the redriven copy starts clean.
      auto sent = client.send(options.queue_url, {.body = message.body});
      if (!sent) {
        std::cerr << fmt::format("redrive: send of {} failed: {} {}\n", message.message_id,
                                 sent.error().code, sent.error().message);
        return 1;
      }
      const consumer::DeleteEntry entry{message.message_id, message.receipt_handle};
      auto deleted = client.delete_batch(options.dlq_url, std::span(&entry, 1));
      if (!deleted || !deleted->front()) {
        std::cerr << fmt::format(
            "redrive: {} was copied but not deleted from the DLQ; it will "
            "be redriven again (harmless)\n",
            message.message_id);
      }
      ++moved;
    }
  }
  std::cout << nlohmann::json{{"event", "redriven"}, {"messages", moved}}.dump() << "\n";
  return 0;
}

}  // namespace ic::app
