// The backend ceiling: drains a pre-filled charge queue with exactly the consumer's request
// shapes and nothing else (no JSON decoding of the body, no bank, no metrics, no heartbeats),
// through the consumer's own clients (AwsStack: curl, SigV4, retry policy; the DynamoDB store),
// so the consumer's charges/s can be read as a fraction of what the emulators allow:
//   ReceiveMessage (10, long poll) -> per message: claim UpdateItem, complete UpdateItem
//   -> DeleteMessageBatch of the received batch.
// A measurement tool for `make bench`, not a test.
//
//   AWS_ENDPOINT_URL_SQS=... AWS_ENDPOINT_URL_DYNAMODB=... AWS_REGION=us-east-1
//     ic_bench_backend_ceiling --queue-url URL --table T --threads 32 --messages 2000
// Prints one JSON object: {"messages":N,"seconds":S,"messagesPerSecond":R,"errors":E}.
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "adapters/dynamodb/dynamodb_store.hpp"
#include "app/aws_stack.hpp"
#include "core/time.hpp"

namespace {

using namespace std::chrono_literals;

struct Options {
  std::string queue_url;
  std::string table;
  int threads = 32;
  long messages = 0;
};

std::optional<std::string> env_value(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"Drains a queue with the consumer's request shapes and no other work"};
  app.add_option("--queue-url", options.queue_url)->required();
  app.add_option("--table", options.table)->required();
  app.add_option("--threads", options.threads)->check(CLI::Range(1, 1024));
  app.add_option("--messages", options.messages,
                 "stop after this many (0: when the queue is empty)");
  CLI11_PARSE(app, argc, argv);

  const ic::app::AwsSettings settings{
      .region = env_value("AWS_REGION").value_or("us-east-1"),
      .sqs_endpoint =
          env_value("AWS_ENDPOINT_URL_SQS").value_or(env_value("AWS_ENDPOINT_URL").value_or("")),
      .dynamodb_endpoint = env_value("AWS_ENDPOINT_URL_DYNAMODB")
                               .value_or(env_value("AWS_ENDPOINT_URL").value_or(""))};
  ic::app::AwsStack aws(settings, env_value);
  ic::dynamodb::DynamoDbIdempotencyStore store(aws.dynamodb(),
                                               ic::app::charge_table(options.table, 24h));

  std::atomic<long> done{0};
  std::atomic<long> errors{0};
  std::atomic<int> idle_threads{0};
  const auto start = std::chrono::steady_clock::now();
  // Taken by the thread that deletes the last wanted message: the others may still sit in a
  // poll of an empty queue, which is not part of the drain.
  std::atomic<std::chrono::steady_clock::rep> end{0};
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < options.threads; ++t) {
      threads.emplace_back([&, t] {
        bool idle = false;
        long token = 0;
        for (;;) {
          if (options.messages > 0 && done.load() >= options.messages) return;
          // Empty-queue end: every thread has seen one empty 1 s poll in a row.
          if (options.messages == 0 && idle_threads.load() == options.threads) return;
          auto batch = aws.sqs().receive(options.queue_url, 10, 1s);
          if (!batch) {
            ++errors;
            continue;
          }
          if (batch->empty() != idle) {
            idle = batch->empty();
            idle_threads += idle ? 1 : -1;
          }
          std::vector<ic::consumer::DeleteEntry> deletes;
          for (const auto& message : *batch) {
            const std::string mine = std::to_string(t) + "-" + std::to_string(++token);
            const auto now = ic::real_clock().now();
            auto claimed = store.claim({.key = message.message_id,
                                        .payload_hash = "bench",
                                        .token = mine,
                                        .owner = "ceiling",
                                        .now = now,
                                        .lease = ic::Millis{60'000}});
            auto completed = claimed
                                 ? store.complete(message.message_id, mine,
                                                  {.status = "DEBITED", .result_ref = "DBT"}, now)
                                 : std::expected<ic::idem::WriteOutcome, ic::Error>(
                                       std::unexpected(claimed.error()));
            if (!completed) ++errors;
            deletes.push_back({message.message_id, message.receipt_handle});
          }
          if (!deletes.empty()) {
            if (!aws.sqs().delete_batch(options.queue_url, deletes)) ++errors;
            const long before = done.fetch_add(static_cast<long>(deletes.size()));
            if (options.messages > 0 && before < options.messages &&
                before + static_cast<long>(deletes.size()) >= options.messages) {
              end = std::chrono::steady_clock::now().time_since_epoch().count();
            }
          }
        }
      });
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::cout << nlohmann::json{{"messages", done.load()},
                              {"seconds", seconds},
                              {"messagesPerSecond", static_cast<double>(done.load()) / seconds},
                              {"errors", errors.load()},
                              {"threads", options.threads}}
                   .dump()
            << "\n";
  return errors.load() == 0 ? 0 : 1;
}
