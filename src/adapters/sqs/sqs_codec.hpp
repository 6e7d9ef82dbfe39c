// Requests and replies of the SQS actions we use, in the AWS JSON 1.0 protocol
// (X-Amz-Target: AmazonSQS.<Action>). Pure functions: no network, unit-tested on their own.
//
//   auto request = encode_delete_batch(url, entries);    // entry Id = its position, "0".."9"
//   auto reply = client.call("DeleteMessageBatch", request);
//   consumer::BatchResult result = decode_batch_result(*reply, entries.size());
#pragma once

#include <chrono>
#include <cstddef>
#include <expected>
#include <map>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "consumer/queue_port.hpp"
#include "core/error.hpp"

namespace ic::sqs {

using QueueAttributes = std::map<std::string, std::string, std::less<>>;

// A message to send (SendMessage / SendMessageBatch).
struct OutgoingMessage {
  std::string body;
  consumer::MessageAttributes attributes;
  std::chrono::seconds delay{0};
};

// A `Failed` entry: SenderFault=true means the entry itself is wrong (permanent); otherwise
// the service failed it (retryable, or throttling by code).
[[nodiscard]] Error entry_error(const nlohmann::json& failed);

[[nodiscard]] nlohmann::json encode_attributes(const consumer::MessageAttributes& attributes);
[[nodiscard]] std::expected<consumer::MessageAttributes, Error> decode_attributes(
    const nlohmann::json& attributes);

// ReceiveMessage asking for ApproximateReceiveCount, SentTimestamp and all message attributes.
[[nodiscard]] nlohmann::json encode_receive(std::string_view queue_url, int max_messages,
                                            std::chrono::seconds wait);
[[nodiscard]] std::expected<std::vector<consumer::Message>, Error> decode_receive(
    const nlohmann::json& reply);

// Batch entries carry their position as Id, never the message id (a standard queue may hand
// out one message twice in one receive).
[[nodiscard]] nlohmann::json encode_delete_batch(std::string_view queue_url,
                                                 std::span<const consumer::DeleteEntry> entries);
[[nodiscard]] nlohmann::json encode_visibility_batch(
    std::string_view queue_url, std::span<const consumer::VisibilityEntry> entries);
[[nodiscard]] nlohmann::json encode_send_batch(std::string_view queue_url,
                                               std::span<const OutgoingMessage> messages);
// Answers each of `entries` positions from Successful/Failed; a position the reply does not
// mention counts as a retryable failure, so nothing is taken for done without an answer.
[[nodiscard]] consumer::BatchResult decode_batch_result(const nlohmann::json& reply,
                                                        std::size_t entries);
// SendMessageBatch: the message id per position, or that entry's error.
[[nodiscard]] std::vector<std::expected<std::string, Error>> decode_send_batch(
    const nlohmann::json& reply, std::size_t entries);

[[nodiscard]] nlohmann::json encode_send(std::string_view queue_url,
                                         const OutgoingMessage& message);
[[nodiscard]] std::expected<std::string, Error> decode_message_id(const nlohmann::json& reply);

[[nodiscard]] nlohmann::json encode_create_queue(std::string_view name,
                                                 const QueueAttributes& attributes);
[[nodiscard]] std::expected<std::string, Error> decode_queue_url(const nlohmann::json& reply);
[[nodiscard]] std::expected<QueueAttributes, Error> decode_queue_attributes(
    const nlohmann::json& reply);

// The RedrivePolicy attribute value: {"deadLetterTargetArn": arn, "maxReceiveCount": "n"}.
[[nodiscard]] std::string redrive_policy(std::string_view dead_letter_arn, int max_receive_count);

}  // namespace ic::sqs
