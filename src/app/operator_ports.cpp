#include "app/operator_ports.hpp"

#include <charconv>
#include <iostream>

#include "event/run_blocking.hpp"

namespace ic::app {

void StdConsole::result(std::string_view line) {
  std::cout << line << "\n";
}

void StdConsole::note(std::string_view line) {
  std::cerr << line << "\n";
}

std::expected<std::string, Error> SqsSourceQueue::send(
    std::string_view body, const consumer::MessageAttributes& attributes) {
  return event::run_blocking(
      client_.send(url_, {.body = std::string(body), .attributes = attributes}));
}

std::expected<std::size_t, Error> SqsDeadLetterQueue::visible_depth() {
  auto attributes =
      event::run_blocking(client_.get_queue_attributes(url_, {"ApproximateNumberOfMessages"}));
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

std::expected<std::vector<consumer::Message>, Error> SqsDeadLetterQueue::receive(
    int max_messages, std::chrono::seconds wait) {
  return event::run_blocking(client_.receive(url_, max_messages, wait));
}

std::expected<consumer::BatchResult, Error> SqsDeadLetterQueue::delete_batch(
    std::span<const consumer::DeleteEntry> entries) {
  return event::run_blocking(client_.delete_batch(url_, entries));
}

std::expected<consumer::BatchResult, Error> SqsDeadLetterQueue::change_visibility_batch(
    std::span<const consumer::VisibilityEntry> entries) {
  return event::run_blocking(client_.change_visibility_batch(url_, entries));
}

}  // namespace ic::app
