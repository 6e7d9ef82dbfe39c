// What the operator commands write to besides the idempotency table (idempotency::OperatorStore):
// the console, and the source and dead-letter queues. The composition root binds them to
// stdout/stderr and to SQS; tests bind them to strings and fakes.
#pragma once

#include <chrono>
#include <cstddef>
#include <expected>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "consumer/queue_port.hpp"
#include "core/error.hpp"

namespace ic::application {

// Where a command reports. `result` lines are its output, JSON a script reads (stdout);
// `note` lines tell the person what happened or what to do next (stderr). One line per call,
// without its newline. Thread-safety: one command, one thread.
class Console {
 public:
  virtual ~Console() = default;
  virtual void result(std::string_view line) = 0;
  virtual void note(std::string_view line) = 0;
};

// The source queue as operators write to it: `reopen --resend` and `redrive` send to it.
// Thread-safety: one command, one thread. Blocking: one round trip plus the client's retries.
class SourceQueue {
 public:
  virtual ~SourceQueue() = default;
  // Returns the new message's id.
  [[nodiscard]] virtual std::expected<std::string, Error> send(
      std::string_view body, const consumer::MessageAttributes& attributes) = 0;
};

// The dead-letter queue as `redrive` drains it. Thread-safety, blocking and batch results: as
// consumer::QueuePort's calls of the same names.
class DeadLetterQueue {
 public:
  virtual ~DeadLetterQueue() = default;
  // The messages visible now (an approximation, as the queue reports it).
  [[nodiscard]] virtual std::expected<std::size_t, Error> visible_depth() = 0;
  [[nodiscard]] virtual std::expected<std::vector<consumer::Message>, Error> receive(
      int max_messages, std::chrono::seconds wait) = 0;
  [[nodiscard]] virtual std::expected<consumer::BatchResult, Error> delete_batch(
      std::span<const consumer::DeleteEntry> entries) = 0;
  [[nodiscard]] virtual std::expected<consumer::BatchResult, Error> change_visibility_batch(
      std::span<const consumer::VisibilityEntry> entries) = 0;
};

}  // namespace ic::application
