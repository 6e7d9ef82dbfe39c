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

std::expected<std::vector<consumer::Message>, Error> SqsClient::receive(std::string_view queue_url,
                                                                        int max_messages,
                                                                        std::chrono::seconds wait,
                                                                        std::stop_token stop) {
  const auto room =
      std::chrono::floor<std::chrono::seconds>(client_.config().timeouts.total) - kAnswerMargin;
  wait = std::clamp(std::min(wait, room), 0s, kMaxWait);
  max_messages = std::clamp(max_messages, 1, consumer::kMaxReceiveMessages);
  auto reply = client_.call("ReceiveMessage", encode_receive(queue_url, max_messages, wait), stop);
  if (!reply && stop.stop_requested()) return std::vector<consumer::Message>{};
  if (!reply) return std::unexpected(reply.error());
  return decode_receive(*reply);
}

std::expected<consumer::BatchResult, Error> SqsClient::delete_batch(
    std::string_view queue_url, std::span<const consumer::DeleteEntry> entries) {
  if (entries.empty()) return consumer::BatchResult{};
  auto reply = client_.call("DeleteMessageBatch", encode_delete_batch(queue_url, entries));
  if (!reply) return std::unexpected(reply.error());
  return decode_batch_result(*reply, entries.size());
}

std::expected<consumer::BatchResult, Error> SqsClient::change_visibility_batch(
    std::string_view queue_url, std::span<const consumer::VisibilityEntry> entries) {
  if (entries.empty()) return consumer::BatchResult{};
  auto reply =
      client_.call("ChangeMessageVisibilityBatch", encode_visibility_batch(queue_url, entries));
  if (!reply) return std::unexpected(reply.error());
  return decode_batch_result(*reply, entries.size());
}

std::expected<std::string, Error> SqsClient::send(std::string_view queue_url,
                                                  const OutgoingMessage& message) {
  auto reply = client_.call("SendMessage", encode_send(queue_url, message));
  if (!reply) return std::unexpected(reply.error());
  return decode_message_id(*reply);
}

std::expected<std::vector<std::expected<std::string, Error>>, Error> SqsClient::send_batch(
    std::string_view queue_url, std::span<const OutgoingMessage> messages) {
  if (messages.empty()) return std::vector<std::expected<std::string, Error>>{};
  auto reply = client_.call("SendMessageBatch", encode_send_batch(queue_url, messages));
  if (!reply) return std::unexpected(reply.error());
  return decode_send_batch(*reply, messages.size());
}

std::expected<std::string, Error> SqsClient::get_queue_url(std::string_view name) {
  auto reply = client_.call("GetQueueUrl", {{"QueueName", name}});
  if (!reply) return std::unexpected(reply.error());
  return decode_queue_url(*reply);
}

std::expected<std::string, Error> SqsClient::create_queue(std::string_view name,
                                                          const QueueAttributes& attributes) {
  auto reply = client_.call("CreateQueue", encode_create_queue(name, attributes));
  if (!reply) return std::unexpected(reply.error());
  return decode_queue_url(*reply);
}

std::expected<QueueAttributes, Error> SqsClient::get_queue_attributes(
    std::string_view queue_url, const std::vector<std::string>& names) {
  const nlohmann::json wanted =
      names.empty() ? nlohmann::json::array({"All"}) : nlohmann::json(names);
  auto reply =
      client_.call("GetQueueAttributes", {{"QueueUrl", queue_url}, {"AttributeNames", wanted}});
  if (!reply) return std::unexpected(reply.error());
  return decode_queue_attributes(*reply);
}

std::expected<void, Error> SqsClient::set_queue_attributes(std::string_view queue_url,
                                                           const QueueAttributes& attributes) {
  auto reply =
      client_.call("SetQueueAttributes", {{"QueueUrl", queue_url}, {"Attributes", attributes}});
  if (!reply) return std::unexpected(reply.error());
  return {};
}

std::expected<void, Error> SqsClient::purge_queue(std::string_view queue_url) {
  auto reply = client_.call("PurgeQueue", {{"QueueUrl", queue_url}});
  if (!reply) return std::unexpected(reply.error());
  return {};
}

std::expected<std::vector<consumer::Message>, Error> SqsQueue::receive(int max_messages,
                                                                       std::chrono::seconds wait) {
  return client_.receive(queue_url_, max_messages, wait);
}

std::expected<std::vector<consumer::Message>, Error> SqsQueue::receive_stoppable(
    int max_messages, std::chrono::seconds wait, std::stop_token stop) {
  return client_.receive(queue_url_, max_messages, wait, std::move(stop));
}

std::expected<consumer::BatchResult, Error> SqsQueue::delete_batch(
    std::span<const consumer::DeleteEntry> entries) {
  return client_.delete_batch(queue_url_, entries);
}

std::expected<consumer::BatchResult, Error> SqsQueue::change_visibility_batch(
    std::span<const consumer::VisibilityEntry> entries) {
  return client_.change_visibility_batch(queue_url_, entries);
}

std::expected<void, Error> SqsQueue::send_to_dlq(std::string_view body,
                                                 const consumer::MessageAttributes& attributes) {
  if (auto limit = dlq_limit_.get(); limit) {
    const std::size_t size = consumer::message_size(body, attributes);
    if (size > *limit) {
      return std::unexpected(
          Error{.error_class = ErrorClass::Permanent,
                .code = "MessageTooLarge",
                .message = fmt::format("DLQ copy of {} bytes (body and attributes) is over the "
                                       "DLQ's MaximumMessageSize of {}",
                                       size, *limit)});
    }
  }
  auto sent = client_.send(dlq_url_, {.body = std::string(body), .attributes = attributes});
  if (!sent) {
    // The limit may have been lowered since it was read: read it again before the next copy.
    if (!sent.error().retryable()) dlq_limit_.forget();
    return std::unexpected(sent.error());
  }
  return {};
}

}  // namespace ic::sqs
