// send: the producer of the demo and the benchmark. Publishes ChargeDueEvents from a JSONL
// file (each line sent as it is, so invalid bodies can be sent on purpose) or generated, with
// a share of them re-sent as new SQS messages under the same chargeId, as a producer retry
// would. Batches are bounded by count (10) and by bytes (at most the queue's MaximumMessageSize
// in total, never more than SQS's batch total), so no batch is refused whole for its size.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <random>
#include <thread>

#include "adapters/sqs/message_size_limit.hpp"
#include "app/cli_support.hpp"
#include "consumer/message_size.hpp"
#include "core/thread_guard.hpp"
#include "event/run_blocking.hpp"

namespace ic::app {
namespace {

struct SendOptions {
  std::string queue_url;
  std::string file;           // JSONL bodies, sent as they are; empty: generate
  int count = 0;              // generated unique charges
  double duplicate_rate = 0;  // extra resends of generated charges, as a fraction of count
  std::uint32_t seed = 1;
  std::string id_prefix = "CHG";
  std::string due_date = "2026-11-30";
};

constexpr int kSenderThreads = 4;
constexpr std::array<std::string_view, 3> kChargeTypes = {"SMS_ALERT_FEE", "CHEQUE_BOOK_FEE",
                                                          "LOCKER_RENT"};

std::vector<std::string> generate(const SendOptions& options, std::mt19937& rng) {
  std::uniform_int_distribution<std::int64_t> account(0, 9'999'999'999);
  std::uniform_int_distribution<std::int64_t> amount(100, 500'000);
  std::vector<std::string> bodies;
  for (int i = 0; i < options.count; ++i) {
    bodies.push_back(nlohmann::json{
        {"schemaVersion", 1},
        {"chargeId", fmt::format("{}-{:06d}", options.id_prefix, i)},
        {"accountId", fmt::format("ACC-{:010d}", account(rng))},
        {"chargeType", kChargeTypes[static_cast<std::size_t>(i) % kChargeTypes.size()]},
        {"amountMinor", amount(rng)},
        {"currency", "INR"},
        {"dueDate", options.due_date}}
                         .dump());
  }
  const auto resends = static_cast<int>(std::lround(options.count * options.duplicate_rate));
  std::uniform_int_distribution<std::size_t> pick(0, bodies.empty() ? 0 : bodies.size() - 1);
  for (int i = 0; i < resends && options.count > 0; ++i) bodies.push_back(bodies[pick(rng)]);
  std::ranges::shuffle(bodies, rng);
  return bodies;
}

struct Line {
  std::string body;
  std::size_t number = 0;  // in the file, counting empty lines (generated: the position)
};

std::expected<std::vector<Line>, std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::unexpected("cannot open " + path);
  std::vector<Line> lines;
  std::size_t number = 0;
  for (std::string line; std::getline(in, line);) {
    ++number;
    if (!line.empty()) lines.push_back({std::move(line), number});
  }
  return lines;
}

// The queue's MaximumMessageSize, which bounds each message and each batch's total; SQS's
// default when it cannot be read (then SQS itself refuses what is too large).
std::size_t size_limit(AwsStack& aws, const std::string& queue_url) {
  sqs::MessageSizeLimit reader(aws.sqs(), queue_url);
  auto limit = event::run_blocking(reader.get());
  if (limit) return *limit;
  std::cerr << fmt::format(
      "send: could not read the queue's MaximumMessageSize ({} {}); assuming {}\n",
      limit.error().code, limit.error().message, consumer::kDefaultMessageSize);
  return consumer::kDefaultMessageSize;
}

// Sends one batch of at most 10, blocking this sender thread; returns how many of its messages
// failed.
int send_batch(AwsStack& aws, const std::string& queue_url,
               const std::vector<sqs::OutgoingMessage>& batch) {
  auto sent = event::run_blocking(aws.sqs().send_batch(queue_url, batch));
  if (!sent) {
    std::cerr << fmt::format("send: batch failed: {} {}\n", sent.error().code,
                             sent.error().message);
    return static_cast<int>(batch.size());
  }
  int failed = 0;
  for (const auto& entry : *sent) {
    if (!entry) {
      std::cerr << fmt::format("send: entry failed: {} {}\n", entry.error().code,
                               entry.error().message);
      ++failed;
    }
  }
  return failed;
}

class StderrThreadFailures final : public ThreadFailureObserver {
 public:
  void on_thread_exception(std::string_view thread, std::string_view what) noexcept override {
    try {
      std::cerr << fmt::format("send: {} thread: exception: {}\n", thread, what);
    } catch (...) {  // noexcept: a report that fails must not terminate
    }
  }
};

int send(AwsStack& aws, const SendOptions& options) {
  std::mt19937 rng(options.seed);
  std::vector<Line> lines;
  if (!options.file.empty()) {
    auto read = read_lines(options.file);
    if (!read) {
      std::cerr << "send: " << read.error() << "\n";
      return 1;
    }
    lines = std::move(*read);
  } else {
    for (auto& body : generate(options, rng)) lines.push_back({std::move(body), lines.size() + 1});
  }

  // A line SQS would refuse is named and left out; every other one is still sent.
  const std::size_t limit = size_limit(aws, options.queue_url);
  std::atomic<int> failed{0};
  std::vector<const Line*> sendable;
  std::vector<std::size_t> sizes;
  for (const Line& line : lines) {
    const std::size_t size = consumer::message_size(line.body, {});
    if (size > limit) {
      std::cerr << fmt::format(
          "send: line {}: {} bytes, over the queue's MaximumMessageSize of {}; not sent\n",
          line.number, size, limit);
      ++failed;
      continue;
    }
    sendable.push_back(&line);
    sizes.push_back(size);
  }
  const auto batches = consumer::pack_batches(sizes, consumer::kMaxBatchEntries, limit);

  StderrThreadFailures report_exception;
  std::atomic<std::size_t> next_batch{0};
  {
    std::vector<std::jthread> senders;
    for (int t = 0; t < kSenderThreads; ++t) {
      senders.emplace_back([&] {
        for (std::size_t b = next_batch++; b < batches.size(); b = next_batch++) {
          std::vector<sqs::OutgoingMessage> batch;
          for (std::size_t i = batches[b].first; i < batches[b].second; ++i) {
            batch.push_back({.body = sendable[i]->body});
          }
          // A batch that throws counts as failed; the sender goes on with the next one.
          if (!run_guarded("sender", &report_exception,
                           [&] { failed += send_batch(aws, options.queue_url, batch); })) {
            failed += static_cast<int>(batch.size());
          }
        }
      });
    }
  }
  const auto messages = static_cast<int>(lines.size());
  nlohmann::json summary = {
      {"event", "sent"}, {"messages", messages - failed}, {"failed", failed.load()}};
  if (options.file.empty()) {  // only generated runs know how many charges are distinct
    summary["unique"] = options.count;
    summary["duplicates"] = messages - options.count;
  }
  std::cout << summary.dump() << "\n";
  return failed == 0 ? 0 : 1;
}

}  // namespace

void add_send(CLI::App& app, SettingsSource& settings, int& exit_code) {
  auto options = std::make_shared<SendOptions>();
  auto* cmd = app.add_subcommand(
      "send",
      "Publish ChargeDueEvents: each line of a JSONL file, or generated charges with a "
      "share re-sent under the same chargeId");
  describe(*cmd,
           "Examples:\n  charge-recovery send --queue-url $CHARGE_QUEUE_URL --file events.jsonl\n"
           "  charge-recovery send --queue-url $CHARGE_QUEUE_URL --count 10000 "
           "--duplicate-rate 0.3 --seed 7");
  settings.add_flags(*cmd, kAwsSettings);
  settings.add_flags(*cmd, {"CHARGE_QUEUE_URL"});
  auto* file_opt = cmd->add_option("--file", options->file, "JSONL file of bodies");
  cmd->add_option("--count", options->count, "generated unique charges")
      ->check(CLI::Range(1, 10'000'000))
      ->excludes(file_opt);
  cmd->add_option("--duplicate-rate", options->duplicate_rate,
                  "extra resends as a fraction of --count (0.3 = 30%)")
      ->check(CLI::Range(0.0, 10.0));
  cmd->add_option("--seed", options->seed, "random seed")->capture_default_str();
  cmd->add_option("--id-prefix", options->id_prefix, "chargeId prefix")->capture_default_str();
  cmd->add_option("--due-date", options->due_date, "dueDate of generated charges")
      ->capture_default_str();
  cmd->callback([&settings, &exit_code, options] {
    auto queue = settings.http_url("CHARGE_QUEUE_URL");
    if (!queue) {
      exit_code = report(queue.error());
      return;
    }
    if (options->file.empty() && options->count == 0) {
      std::cerr << "send: give --file or --count\n";
      exit_code = 2;
      return;
    }
    options->queue_url = *queue;
    exit_code = with_aws(settings, [&](AwsStack& aws) { return send(aws, *options); });
  });
}

}  // namespace ic::app
