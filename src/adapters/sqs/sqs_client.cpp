#include "adapters/sqs/sqs_client.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "consumer/message_size.hpp"

namespace ic::sqs {

namespace {

using namespace std::chrono_literals;

constexpr std::chrono::seconds kAnswerMargin{5};
constexpr std::chrono::seconds kMaxWait{20};  // SQS limit of WaitTimeSeconds

}  // namespace

SqsClient::Reply<std::vector<consumer::Message>> SqsClient::receive(std::string_view queue_url,
                                                                    int max_messages,
                                                                    std::chrono::seconds wait,
                                                                    std::stop_token stop) {
  const auto room =
      std::chrono::floor<std::chrono::seconds>(client_.config().timeouts.total) - kAnswerMargin;
  wait = std::clamp(std::min(wait, room), 0s, kMaxWait);
  max_messages = std::clamp(max_messages, 1, consumer::kMaxReceiveMessages);
  auto reply =
      co_await client_.call("ReceiveMessage", encode_receive(queue_url, max_messages, wait), stop);
  if (!reply && stop.stop_requested()) co_return std::vector<consumer::Message>{};
  if (!reply) co_return std::unexpected(reply.error());
  co_return decode_receive(*reply);
}

SqsClient::Reply<consumer::BatchResult> SqsClient::delete_batch(
    std::string_view queue_url, std::span<const consumer::DeleteEntry> entries) {
  if (entries.empty()) co_return consumer::BatchResult{};
  auto reply = co_await client_.call("DeleteMessageBatch", encode_delete_batch(queue_url, entries));
  if (!reply) co_return std::unexpected(reply.error());
  co_return decode_batch_result(*reply, entries.size());
}

SqsClient::Reply<consumer::BatchResult> SqsClient::change_visibility_batch(
    std::string_view queue_url, std::span<const consumer::VisibilityEntry> entries) {
  if (entries.empty()) co_return consumer::BatchResult{};
  auto reply = co_await client_.call("ChangeMessageVisibilityBatch",
                                     encode_visibility_batch(queue_url, entries));
  if (!reply) co_return std::unexpected(reply.error());
  co_return decode_batch_result(*reply, entries.size());
}

SqsClient::Reply<std::string> SqsClient::send(std::string_view queue_url,
                                              const OutgoingMessage& message) {
  auto reply = co_await client_.call("SendMessage", encode_send(queue_url, message));
  if (!reply) co_return std::unexpected(reply.error());
  co_return decode_message_id(*reply);
}

SqsClient::Reply<std::vector<std::expected<std::string, Error>>> SqsClient::send_batch(
    std::string_view queue_url, std::span<const OutgoingMessage> messages) {
  if (messages.empty()) co_return std::vector<std::expected<std::string, Error>>{};
  auto reply = co_await client_.call("SendMessageBatch", encode_send_batch(queue_url, messages));
  if (!reply) co_return std::unexpected(reply.error());
  co_return decode_send_batch(*reply, messages.size());
}

SqsClient::Reply<std::string> SqsClient::get_queue_url(std::string_view name) {
  const nlohmann::json request = {{"QueueName", name}};
  auto reply = co_await client_.call("GetQueueUrl", request);
  if (!reply) co_return std::unexpected(reply.error());
  co_return decode_queue_url(*reply);
}

SqsClient::Reply<std::string> SqsClient::create_queue(std::string_view name,
                                                      const QueueAttributes& attributes) {
  auto reply = co_await client_.call("CreateQueue", encode_create_queue(name, attributes));
  if (!reply) co_return std::unexpected(reply.error());
  co_return decode_queue_url(*reply);
}

SqsClient::Reply<QueueAttributes> SqsClient::get_queue_attributes(
    std::string_view queue_url, const std::vector<std::string>& names) {
  const nlohmann::json wanted =
      names.empty() ? nlohmann::json::array({"All"}) : nlohmann::json(names);
  const nlohmann::json request = {{"QueueUrl", queue_url}, {"AttributeNames", wanted}};
  auto reply = co_await client_.call("GetQueueAttributes", request);
  if (!reply) co_return std::unexpected(reply.error());
  co_return decode_queue_attributes(*reply);
}

SqsClient::Reply<void> SqsClient::set_queue_attributes(std::string_view queue_url,
                                                       const QueueAttributes& attributes) {
  const nlohmann::json request = {{"QueueUrl", queue_url}, {"Attributes", attributes}};
  auto reply = co_await client_.call("SetQueueAttributes", request);
  if (!reply) co_return std::unexpected(reply.error());
  co_return std::expected<void, Error>{};
}

SqsClient::Reply<void> SqsClient::purge_queue(std::string_view queue_url) {
  const nlohmann::json request = {{"QueueUrl", queue_url}};
  auto reply = co_await client_.call("PurgeQueue", request);
  if (!reply) co_return std::unexpected(reply.error());
  co_return std::expected<void, Error>{};
}

Task<SqsQueue::Received> SqsQueue::receive(int max_messages, std::chrono::seconds wait,
                                           std::stop_token stop) {
  return client_.receive(queue_url_, max_messages, wait, std::move(stop));
}

Task<SqsQueue::BatchReply> SqsQueue::delete_batch(std::span<const consumer::DeleteEntry> entries) {
  return client_.delete_batch(queue_url_, entries);
}

Task<SqsQueue::BatchReply> SqsQueue::change_visibility_batch(
    std::span<const consumer::VisibilityEntry> entries) {
  return client_.change_visibility_batch(queue_url_, entries);
}

Task<std::expected<void, Error>> SqsQueue::send_to_dlq(
    std::string_view body, const consumer::MessageAttributes& attributes) {
  const auto limit = co_await dlq_limit_.get();
  if (limit) {
    const std::size_t size = consumer::message_size(body, attributes);
    if (size > *limit) {
      co_return std::unexpected(
          Error{.error_class = ErrorClass::Permanent,
                .code = "MessageTooLarge",
                .message = fmt::format("DLQ copy of {} bytes (body and attributes) is over the "
                                       "DLQ's MaximumMessageSize of {}",
                                       size, *limit)});
    }
  }
  const OutgoingMessage copy{.body = std::string(body), .attributes = attributes};
  auto sent = co_await client_.send(dlq_url_, copy);
  if (!sent) {
    // The limit may have been lowered since it was read: read it again before the next copy.
    if (!sent.error().retryable()) dlq_limit_.forget();
    co_return std::unexpected(sent.error());
  }
  co_return std::expected<void, Error>{};
}

}  // namespace ic::sqs
