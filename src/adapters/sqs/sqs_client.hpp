// Amazon SQS over the AWS JSON 1.0 protocol (ic::aws::JsonClient with target prefix
// "AmazonSQS"): the data-plane calls the listener needs and the admin calls of provisioning,
// sending and redriving. SqsQueue binds a source queue and its DLQ into the consumer::QueuePort.
//
//   aws::JsonClient json({.service = "sqs", .signing_name = "sqs", .target_prefix = "AmazonSQS",
//                         .endpoint = endpoint, .region = region,
//                         .timeouts = {.connect = 2s, .total = 30s}}, transport, creds, retry);
//   SqsClient sqs(json);
//   auto url = co_await sqs.get_queue_url("charge-due");   // event::run_blocking outside a task
//   SqsQueue queue(sqs, *url, *dlq_url);   // hand to consumer::ListenerContainer
#pragma once

#include <chrono>
#include <expected>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "adapters/sqs/message_size_limit.hpp"
#include "adapters/sqs/sqs_codec.hpp"
#include "aws/json_client.hpp"
#include "consumer/queue_port.hpp"

namespace ic::sqs {

inline constexpr std::string_view kSqsTargetPrefix = "AmazonSQS";

// Thread-safety: every method returns a task awaited at once on an event loop's thread
// (event::run_blocking for a blocking caller); any number may be in flight at once, on any
// number of loops (JsonClient::call's). Views and spans passed in need only live until the task
// finishes. Ownership: borrows the JsonClient, which must outlive this object.
// Long polls: a receive whose wait reaches the client's total HTTP timeout would always time
// out, and the messages SQS handed to that poll would stay invisible for a whole visibility
// timeout; receive() therefore shortens the wait to leave 5 s of the timeout for the answer.
class SqsClient {
 public:
  template <class T>
  using Reply = Task<std::expected<T, Error>>;

  explicit SqsClient(aws::JsonClient& client) : client_(client) {}

  // Once `stop` is requested the poll is abandoned and answers with no messages: what SQS may
  // already have handed to it stays invisible for one visibility timeout, then comes back.
  [[nodiscard]] Reply<std::vector<consumer::Message>> receive(std::string_view queue_url,
                                                              int max_messages,
                                                              std::chrono::seconds wait,
                                                              std::stop_token stop = {});
  [[nodiscard]] Reply<consumer::BatchResult> delete_batch(
      std::string_view queue_url, std::span<const consumer::DeleteEntry> entries);
  [[nodiscard]] Reply<consumer::BatchResult> change_visibility_batch(
      std::string_view queue_url, std::span<const consumer::VisibilityEntry> entries);
  // Returns the new message id.
  [[nodiscard]] Reply<std::string> send(std::string_view queue_url, const OutgoingMessage& message);
  // Up to 10 messages; per position, the message id or that entry's error.
  [[nodiscard]] Reply<std::vector<std::expected<std::string, Error>>> send_batch(
      std::string_view queue_url, std::span<const OutgoingMessage> messages);

  [[nodiscard]] Reply<std::string> get_queue_url(std::string_view name);
  // Idempotent for identical attributes (SQS answers with the existing queue's URL).
  [[nodiscard]] Reply<std::string> create_queue(std::string_view name,
                                                const QueueAttributes& attributes = {});
  // `names` empty means All.
  [[nodiscard]] Reply<QueueAttributes> get_queue_attributes(
      std::string_view queue_url, const std::vector<std::string>& names = {});
  [[nodiscard]] Reply<void> set_queue_attributes(std::string_view queue_url,
                                                 const QueueAttributes& attributes);
  [[nodiscard]] Reply<void> purge_queue(std::string_view queue_url);

 private:
  aws::JsonClient& client_;
};

// The consumer::QueuePort over one source queue and its dead-letter queue.
// Thread-safety and ownership: as SqsClient; `client` must outlive the queue.
// send_to_dlq counts each copy as SQS does (consumer/message_size.hpp) against the DLQ's
// MaximumMessageSize and refuses one too large itself (permanent, MessageTooLarge), so the
// container's next smaller copy follows without a round trip, whatever the emulator in front
// counts. While the limit cannot be read, copies go out unchecked and SQS judges them (a
// refusal makes the next copy read the limit again).
class SqsQueue final : public consumer::QueuePort {
 public:
  SqsQueue(SqsClient& client, std::string queue_url, std::string dlq_url)
      : client_(client),
        queue_url_(std::move(queue_url)),
        dlq_url_(std::move(dlq_url)),
        dlq_limit_(client_, dlq_url_) {}

  [[nodiscard]] Task<Received> receive(int max_messages, std::chrono::seconds wait,
                                       std::stop_token stop = {}) override;
  [[nodiscard]] Task<BatchReply> delete_batch(
      std::span<const consumer::DeleteEntry> entries) override;
  [[nodiscard]] Task<BatchReply> change_visibility_batch(
      std::span<const consumer::VisibilityEntry> entries) override;
  [[nodiscard]] Task<std::expected<void, Error>> send_to_dlq(
      std::string_view body, const consumer::MessageAttributes& attributes) override;

  // The DLQ's MaximumMessageSize, read now through `client` (at start-up, the probe client)
  // rather than at the first dead letter.
  [[nodiscard]] SqsClient::Reply<std::size_t> dlq_size_limit(SqsClient& client) {
    return dlq_limit_.get_through(client);
  }

 private:
  SqsClient& client_;
  const std::string queue_url_;
  const std::string dlq_url_;
  MessageSizeLimit dlq_limit_;
};

}  // namespace ic::sqs
