#include "adapters/sqs/sqs_client.hpp"

#include <algorithm>

namespace ic::sqs {

namespace {

using namespace std::chrono_literals;

constexpr std::chrono::seconds kAnswerMargin{5};
constexpr std::chrono::seconds kMaxWait{20};  // SQS limit of WaitTimeSeconds

}  // namespace

std::expected<nlohmann::json, consumer::QueueError> SqsClient::call(std::string_view action,
                                                                    const nlohmann::json& request) {
  auto reply = client_.call(action, request);
  if (!reply) return std::unexpected(to_queue_error(reply.error()));
  return std::move(*reply);
}

std::expected<std::vector<consumer::Message>, consumer::QueueError> SqsClient::receive(
    std::string_view queue_url, int max_messages, std::chrono::seconds wait) {
  const auto room =
      std::chrono::floor<std::chrono::seconds>(client_.config().timeouts.total) - kAnswerMargin;
  wait = std::clamp(std::min(wait, room), 0s, kMaxWait);
  max_messages = std::clamp(max_messages, 1, consumer::kMaxReceiveMessages);
  auto reply = call("ReceiveMessage", encode_receive(queue_url, max_messages, wait));
  if (!reply) return std::unexpected(reply.error());
  return decode_receive(*reply);
}

std::expected<consumer::BatchResult, consumer::QueueError> SqsClient::delete_batch(
    std::string_view queue_url, std::span<const consumer::DeleteEntry> entries) {
  if (entries.empty()) return consumer::BatchResult{};
  auto reply = call("DeleteMessageBatch", encode_delete_batch(queue_url, entries));
  if (!reply) return std::unexpected(reply.error());
  return decode_batch_result(*reply, entries.size());
}

std::expected<consumer::BatchResult, consumer::QueueError> SqsClient::change_visibility_batch(
    std::string_view queue_url, std::span<const consumer::VisibilityEntry> entries) {
  if (entries.empty()) return consumer::BatchResult{};
  auto reply = call("ChangeMessageVisibilityBatch", encode_visibility_batch(queue_url, entries));
  if (!reply) return std::unexpected(reply.error());
  return decode_batch_result(*reply, entries.size());
}

std::expected<std::string, consumer::QueueError> SqsClient::send(std::string_view queue_url,
                                                                 const OutgoingMessage& message) {
  auto reply = call("SendMessage", encode_send(queue_url, message));
  if (!reply) return std::unexpected(reply.error());
  return decode_message_id(*reply);
}

std::expected<std::vector<std::expected<std::string, consumer::QueueError>>, consumer::QueueError>
SqsClient::send_batch(std::string_view queue_url, std::span<const OutgoingMessage> messages) {
  if (messages.empty()) return std::vector<std::expected<std::string, consumer::QueueError>>{};
  auto reply = call("SendMessageBatch", encode_send_batch(queue_url, messages));
  if (!reply) return std::unexpected(reply.error());
  return decode_send_batch(*reply, messages.size());
}

std::expected<std::string, consumer::QueueError> SqsClient::get_queue_url(std::string_view name) {
  auto reply = call("GetQueueUrl", {{"QueueName", name}});
  if (!reply) return std::unexpected(reply.error());
  return decode_queue_url(*reply);
}

std::expected<std::string, consumer::QueueError> SqsClient::create_queue(
    std::string_view name, const QueueAttributes& attributes) {
  auto reply = call("CreateQueue", encode_create_queue(name, attributes));
  if (!reply) return std::unexpected(reply.error());
  return decode_queue_url(*reply);
}

std::expected<QueueAttributes, consumer::QueueError> SqsClient::get_queue_attributes(
    std::string_view queue_url, const std::vector<std::string>& names) {
  const nlohmann::json wanted =
      names.empty() ? nlohmann::json::array({"All"}) : nlohmann::json(names);
  auto reply = call("GetQueueAttributes", {{"QueueUrl", queue_url}, {"AttributeNames", wanted}});
  if (!reply) return std::unexpected(reply.error());
  return decode_queue_attributes(*reply);
}

std::expected<void, consumer::QueueError> SqsClient::set_queue_attributes(
    std::string_view queue_url, const QueueAttributes& attributes) {
  auto reply = call("SetQueueAttributes", {{"QueueUrl", queue_url}, {"Attributes", attributes}});
  if (!reply) return std::unexpected(reply.error());
  return {};
}

std::expected<void, consumer::QueueError> SqsClient::purge_queue(std::string_view queue_url) {
  auto reply = call("PurgeQueue", {{"QueueUrl", queue_url}});
  if (!reply) return std::unexpected(reply.error());
  return {};
}

std::expected<std::vector<consumer::Message>, consumer::QueueError> SqsQueue::receive(
    int max_messages, std::chrono::seconds wait) {
  return client_.receive(queue_url_, max_messages, wait);
}

std::expected<consumer::BatchResult, consumer::QueueError> SqsQueue::delete_batch(
    std::span<const consumer::DeleteEntry> entries) {
  return client_.delete_batch(queue_url_, entries);
}

std::expected<consumer::BatchResult, consumer::QueueError> SqsQueue::change_visibility_batch(
    std::span<const consumer::VisibilityEntry> entries) {
  return client_.change_visibility_batch(queue_url_, entries);
}

std::expected<void, consumer::QueueError> SqsQueue::send_to_dlq(
    std::string_view body, const consumer::MessageAttributes& attributes) {
  auto sent = client_.send(dlq_url_, {.body = std::string(body), .attributes = attributes});
  if (!sent) return std::unexpected(sent.error());
  return {};
}

}  // namespace ic::sqs
