// The backend ceiling: drains a pre-filled charge queue with exactly the consumer's request
// shapes and nothing else (no JSON decoding of the body, no bank, no metrics, no heartbeats),
// through the consumer's own clients (AwsStack: curl, SigV4, retry policy; the DynamoDB store),
// so the consumer's charges/s can be read as a fraction of what the emulators allow:
//   ReceiveMessage (10, long poll) -> per message: claim UpdateItem, complete UpdateItem
//   -> DeleteMessageBatch of the received batch.
// Its concurrency is shaped like the consumer's, only larger: --receivers long polls feed
// --workers threads, each claiming and completing one message at a time (each thread runs its
// calls to their end on its own loop, event::run_blocking), and the worker that
// completes a batch's last message deletes the batch. A receive's ten messages are thus claimed
// in parallel, not one after another behind a slow receive. bench/runs/ceiling.py runs it at
// several sizes and takes the fastest, so a rate that stops rising with concurrency shows the
// backend, not the generator, is the limit. A measurement tool for `make bench`, not a test.
//
//   AWS_ENDPOINT_URL_SQS=... AWS_ENDPOINT_URL_DYNAMODB=... AWS_REGION=us-east-1
//     ic_bench_backend_ceiling --queue-url URL --table T --receivers 4 --workers 64 --messages 2000
// Prints one JSON object:
//   {"messages":N,"seconds":S,"messagesPerSecond":R,"errors":E,"receivers":R,"workers":W}
// where S runs to the delete that completes the N-th message (N counts whole batches, so it may
// exceed --messages by up to 9); the polls still open then are abandoned, not waited out.
#include <CLI/CLI.hpp>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <deque>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <thread>
#include <vector>

#include "adapters/dynamodb/dynamodb_store.hpp"
#include "app/aws_stack.hpp"
#include "core/thread_annotations.hpp"
#include "core/time.hpp"
#include "event/run_blocking.hpp"

namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;

struct Options {
  std::string queue_url;
  std::string table;
  int receivers = 4;
  int workers = 64;
  long messages = 0;
};

std::optional<std::string> env_value(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
}

// One received batch: deleted as a whole once its last message is completed.
struct Batch {
  std::vector<ic::consumer::DeleteEntry> deletes;
  std::atomic<std::size_t> pending{0};
};

struct Work {
  std::shared_ptr<Batch> batch;
  std::string message_id;
};

class Drain {
 public:
  Drain(const Options& options, ic::app::AwsStack& aws,
        ic::dynamodb::DynamoDbIdempotencyStore& store)
      : options_(options), aws_(aws), store_(store) {}

  void receive() {
    for (;;) {
      {
        // Like the consumer's prefetch: receive only when a batch's worth of workers can start
        // soon, so received messages do not wait out their visibility in this process.
        ic::MutexLock lock(mutex_);
        space_.wait(mutex_, [this]() REQUIRES(mutex_) {
          return stop_ || queued_.size() < static_cast<std::size_t>(options_.workers);
        });
        if (stop_) return;
      }
      // Stoppable, so that the process ends when the count is reached, not a poll later.
      auto received = ic::event::run_blocking(aws_.sqs().receive(
          options_.queue_url, ic::consumer::kMaxReceiveMessages, 1s, stopping_.get_token()));
      if (!received) {
        ++errors_;
        continue;
      }
      if (received->empty()) continue;
      auto batch = std::make_shared<Batch>();
      batch->pending = received->size();
      ic::MutexLock lock(mutex_);
      for (auto& message : *received) {
        batch->deletes.push_back({message.message_id, message.receipt_handle});
        queued_.push_back({batch, std::move(message.message_id)});
      }
      items_.notify_all();
    }
  }

  void work(int worker) {
    long token = 0;
    for (;;) {
      Work work;
      {
        ic::MutexLock lock(mutex_);
        items_.wait(mutex_, [this]() REQUIRES(mutex_) { return stop_ || !queued_.empty(); });
        if (stop_) return;
        work = std::move(queued_.front());
        queued_.pop_front();
        space_.notify_one();
      }
      process(work, std::to_string(worker) + "-" + std::to_string(++token));
    }
  }

  // Deleted when the wanted count was reached: batches finishing after it are not counted.
  [[nodiscard]] long done() const { return done_at_end_.load(); }
  [[nodiscard]] long errors() const { return errors_.load(); }
  [[nodiscard]] Clock::time_point end() const {
    return Clock::time_point(Clock::duration(end_.load()));
  }

 private:
  void process(const Work& work, const std::string& token) {
    const auto now = ic::real_clock().now();
    auto claimed = ic::event::run_blocking(store_.claim({.key = work.message_id,
                                                         .payload_hash = "bench",
                                                         .token = token,
                                                         .owner = "ceiling",
                                                         .now = now,
                                                         .lease = ic::Millis{60'000}}));
    if (!claimed || !ic::event::run_blocking(store_.complete(
                        work.message_id, token, {.status = "DEBITED", .result_ref = "DBT"}, now))) {
      ++errors_;
    }
    if (--work.batch->pending > 0) return;
    if (!ic::event::run_blocking(aws_.sqs().delete_batch(options_.queue_url, work.batch->deletes)))
      ++errors_;
    const auto size = static_cast<long>(work.batch->deletes.size());
    const long before = done_.fetch_add(size);
    if (before < options_.messages && before + size >= options_.messages) {
      end_ = Clock::now().time_since_epoch().count();
      done_at_end_ = before + size;
      stopping_.request_stop();
      ic::MutexLock lock(mutex_);
      stop_ = true;
      items_.notify_all();
      space_.notify_all();
    }
  }

  const Options& options_;
  ic::app::AwsStack& aws_;
  ic::dynamodb::DynamoDbIdempotencyStore& store_;
  std::atomic<long> done_{0};
  std::atomic<long> errors_{0};
  std::atomic<Clock::rep> end_{0};
  std::atomic<long> done_at_end_{0};
  std::stop_source stopping_;
  ic::Mutex mutex_;
  ic::CondVar items_;  // work queued, or stop: the workers wait on it
  ic::CondVar space_;  // a queued message taken, or stop: the receivers wait on it
  std::deque<Work> queued_ GUARDED_BY(mutex_);
  bool stop_ GUARDED_BY(mutex_) = false;
};

}  // namespace

int main(int argc, char** argv) {
  Options options;
  CLI::App app{"Drains a queue with the consumer's request shapes and no other work"};
  app.add_option("--queue-url", options.queue_url)->required();
  app.add_option("--table", options.table)->required();
  app.add_option("--receivers", options.receivers, "concurrent long polls")
      ->check(CLI::Range(1, 256));
  app.add_option("--workers", options.workers, "concurrent claim+complete")
      ->check(CLI::Range(1, 1024));
  app.add_option("--messages", options.messages, "stop after this many are deleted")
      ->required()
      ->check(CLI::PositiveNumber);
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

  Drain drain(options, aws, store);
  const auto start = Clock::now();
  {
    std::vector<std::jthread> threads;
    for (int r = 0; r < options.receivers; ++r) threads.emplace_back([&] { drain.receive(); });
    for (int w = 0; w < options.workers; ++w) threads.emplace_back([&, w] { drain.work(w); });
  }
  const double seconds = std::chrono::duration<double>(drain.end() - start).count();
  std::cout << nlohmann::json{{"messages", drain.done()},
                              {"seconds", seconds},
                              {"messagesPerSecond", static_cast<double>(drain.done()) / seconds},
                              {"errors", drain.errors()},
                              {"receivers", options.receivers},
                              {"workers", options.workers}}
                   .dump()
            << "\n";
  return drain.errors() == 0 ? 0 : 1;
}
