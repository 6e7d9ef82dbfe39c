// The operator commands' ports bound for the process: the console is stdout/stderr, and the
// queues are SQS queues named by URL. The operator ports are blocking: each call runs the SQS
// client's task to its end on the calling thread (event::run_blocking).
#pragma once

#include <string>

#include "adapters/sqs/sqs_client.hpp"
#include "application/operations/ports.hpp"

namespace ic::app {

class StdConsole final : public application::Console {
 public:
  void result(std::string_view line) override;
  void note(std::string_view line) override;
};

// Ownership: borrows the client, which must outlive it.
class SqsSourceQueue final : public application::SourceQueue {
 public:
  SqsSourceQueue(sqs::SqsClient& client, std::string url) : client_(client), url_(std::move(url)) {}
  [[nodiscard]] std::expected<std::string, Error> send(
      std::string_view body, const consumer::MessageAttributes& attributes) override;

 private:
  sqs::SqsClient& client_;
  const std::string url_;
};

// Ownership: borrows the client, which must outlive it.
class SqsDeadLetterQueue final : public application::DeadLetterQueue {
 public:
  SqsDeadLetterQueue(sqs::SqsClient& client, std::string url)
      : client_(client), url_(std::move(url)) {}
  // ApproximateNumberOfMessages.
  [[nodiscard]] std::expected<std::size_t, Error> visible_depth() override;
  [[nodiscard]] std::expected<std::vector<consumer::Message>, Error> receive(
      int max_messages, std::chrono::seconds wait) override;
  [[nodiscard]] std::expected<consumer::BatchResult, Error> delete_batch(
      std::span<const consumer::DeleteEntry> entries) override;
  [[nodiscard]] std::expected<consumer::BatchResult, Error> change_visibility_batch(
      std::span<const consumer::VisibilityEntry> entries) override;

 private:
  sqs::SqsClient& client_;
  const std::string url_;
};

}  // namespace ic::app
