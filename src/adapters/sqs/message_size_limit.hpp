// A queue's MaximumMessageSize, read once (GetQueueAttributes) and kept: it is set by whoever
// provisions the queue, anything from 1 KiB to 1 MiB, and changes rarely. A refusal for size
// says it may have changed, so forget() makes the next get() read it again. A permanent
// failure is kept as well (an emulator that does not model the attribute, a policy without
// GetQueueAttributes): asking again on every send would only fail again.
//
//   MessageSizeLimit limit(sqs, queue_url);
//   auto bytes = co_await limit.get();   // cached after the first answer
#pragma once

#include <cstddef>
#include <expected>
#include <optional>
#include <string>

#include "adapters/sqs/sqs_codec.hpp"
#include "core/task.hpp"
#include "core/thread_annotations.hpp"

namespace ic::sqs {

class SqsClient;

// The attribute's value as a size within SQS's range, or a permanent error.
[[nodiscard]] std::expected<std::size_t, Error> parse_maximum_message_size(
    const QueueAttributes& attributes);

// Thread-safety: get() returns a task awaited at once on an event loop's thread; get() and
// forget() may be called concurrently, from any number of loops; concurrent first calls may
// each read the attribute. Ownership: borrows the client, which must outlive it.
class MessageSizeLimit {
 public:
  MessageSizeLimit(SqsClient& client, std::string queue_url)
      : client_(client), queue_url_(std::move(queue_url)) {}

  using Limit = std::expected<std::size_t, Error>;

  [[nodiscard]] Task<Limit> get() { return get_through(client_); }
  // get(), reading (when nothing is kept) through `client`: at start-up, one with a short
  // timeout and no retries, so that an SQS outage does not hold the start up.
  [[nodiscard]] Task<Limit> get_through(SqsClient& client);
  void forget();

 private:
  [[nodiscard]] std::optional<Limit> kept();

  SqsClient& client_;
  const std::string queue_url_;
  Mutex mutex_;
  std::optional<Limit> cached_ GUARDED_BY(mutex_);
};

}  // namespace ic::sqs
