#include "adapters/sqs/sqs_codec.hpp"

#include <charconv>
#include <cstdint>
#include <optional>

#include "aws/protocol/retry_policy.hpp"

namespace ic::sqs {

namespace {

using nlohmann::json;

Error malformed(std::string what) {
  // A reply we cannot read may come from a proxy or a partial answer; retrying is safe for
  // every call here and the caller backs off. It followed a 2xx, so the call may have taken
  // effect (a message sent, deliveries received).
  return {.error_class = ErrorClass::Retryable,
          .code = "MalformedReply",
          .message = std::move(what),
          .ambiguous = true};
}

std::string string_at(const json& object, const char* name) {
  auto it = object.find(name);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string{};
}

bool sender_fault(const json& failed) {
  auto it = failed.find("SenderFault");
  if (it == failed.end()) return false;
  if (it->is_boolean()) return it->get<bool>();
  return it->is_string() && it->get<std::string>() == "true";  // some emulators send a string
}

// Batch entry Ids we generate are decimal positions.
std::optional<std::size_t> position_of(const json& entry, std::size_t entries) {
  const std::string id = string_at(entry, "Id");
  std::size_t position = 0;
  const auto [end, ec] = std::from_chars(id.data(), id.data() + id.size(), position);
  if (ec != std::errc{} || end != id.data() + id.size() || position >= entries) return std::nullopt;
  return position;
}

template <class Entry, class Fill>
json encode_batch(std::string_view queue_url, std::span<const Entry> entries, Fill fill) {
  json out_entries = json::array();
  for (std::size_t i = 0; i < entries.size(); ++i) {
    json entry{{"Id", std::to_string(i)}};
    fill(entry, entries[i]);
    out_entries.push_back(std::move(entry));
  }
  return {{"QueueUrl", queue_url}, {"Entries", std::move(out_entries)}};
}

std::expected<consumer::Message, Error> decode_message(const json& item) {
  if (!item.is_object()) return std::unexpected(malformed("message is not an object"));
  consumer::Message message{.message_id = string_at(item, "MessageId"),
                            .receipt_handle = string_at(item, "ReceiptHandle"),
                            .body = string_at(item, "Body")};
  if (message.message_id.empty() || message.receipt_handle.empty()) {
    return std::unexpected(malformed("message without MessageId or ReceiptHandle"));
  }
  if (auto attributes = item.find("Attributes"); attributes != item.end()) {
    if (!attributes->is_object()) return std::unexpected(malformed("Attributes not an object"));
    for (const auto& [name, value] : attributes->items()) {
      if (value.is_string()) message.attributes.emplace(name, value.get<std::string>());
    }
  }
  const auto number = [&](std::string_view name) -> std::int64_t {
    auto it = message.attributes.find(name);
    std::int64_t value = 0;
    if (it != message.attributes.end()) {
      std::from_chars(it->second.data(), it->second.data() + it->second.size(), value);
    }
    return value;
  };
  message.receive_count = static_cast<int>(number("ApproximateReceiveCount"));
  message.sent_at = Instant{Millis{number("SentTimestamp")}};
  if (auto attributes = item.find("MessageAttributes"); attributes != item.end()) {
    auto decoded = decode_attributes(*attributes);
    if (!decoded) return std::unexpected(decoded.error());
    message.message_attributes = std::move(*decoded);
  }
  return message;
}

}  // namespace

Error entry_error(const json& failed) {
  Error error{.code = string_at(failed, "Code"), .message = string_at(failed, "Message")};
  if (sender_fault(failed)) {
    error.error_class = ErrorClass::Permanent;
  } else if (aws::is_throttling_code(error.code)) {
    error.error_class = ErrorClass::Throttling;
  }
  return error;
}

json encode_attributes(const consumer::MessageAttributes& attributes) {
  json out = json::object();
  for (const auto& [name, attribute] : attributes) {
    // Binary values travel base64-encoded in JSON, which is how consumer::MessageAttribute keeps
    // them.
    const bool binary = attribute.data_type.starts_with("Binary");
    out[name] = {{"DataType", attribute.data_type},
                 {binary ? "BinaryValue" : "StringValue", attribute.value}};
  }
  return out;
}

std::expected<consumer::MessageAttributes, Error> decode_attributes(const json& attributes) {
  if (!attributes.is_object()) return std::unexpected(malformed("MessageAttributes not an object"));
  consumer::MessageAttributes out;
  for (const auto& [name, value] : attributes.items()) {
    if (!value.is_object())
      return std::unexpected(malformed("a message attribute is not an object"));
    consumer::MessageAttribute attribute{.data_type = string_at(value, "DataType")};
    attribute.value = attribute.data_type.starts_with("Binary") ? string_at(value, "BinaryValue")
                                                                : string_at(value, "StringValue");
    out.emplace(name, std::move(attribute));
  }
  return out;
}

json encode_receive(std::string_view queue_url, int max_messages, std::chrono::seconds wait) {
  const json system_attributes = json::array({"ApproximateReceiveCount", "SentTimestamp"});
  return {{"QueueUrl", queue_url},
          {"MaxNumberOfMessages", max_messages},
          {"WaitTimeSeconds", wait.count()},
          // AttributeNames is deprecated but is what older endpoints and emulators read. Its
          // members are queue attribute names (botocore's QueueAttributeName enum): the
          // message's ApproximateReceiveCount is not one, "All" is, and asks for every
          // message system attribute on the endpoints that read only this field.
          {"AttributeNames", json::array({"All"})},
          {"MessageSystemAttributeNames", system_attributes},
          {"MessageAttributeNames", json::array({"All"})}};
}

std::expected<std::vector<consumer::Message>, Error> decode_receive(const json& reply) {
  std::vector<consumer::Message> out;
  auto messages = reply.find("Messages");
  if (messages == reply.end()) return out;  // an empty long poll omits the list
  if (!messages->is_array()) return std::unexpected(malformed("Messages is not an array"));
  for (const auto& item : *messages) {
    auto message = decode_message(item);
    if (!message) return std::unexpected(message.error());
    out.push_back(std::move(*message));
  }
  return out;
}

json encode_delete_batch(std::string_view queue_url,
                         std::span<const consumer::DeleteEntry> entries) {
  return encode_batch(queue_url, entries, [](json& out, const consumer::DeleteEntry& entry) {
    out["ReceiptHandle"] = entry.receipt_handle;
  });
}

json encode_visibility_batch(std::string_view queue_url,
                             std::span<const consumer::VisibilityEntry> entries) {
  return encode_batch(queue_url, entries, [](json& out, const consumer::VisibilityEntry& entry) {
    out["ReceiptHandle"] = entry.receipt_handle;
    out["VisibilityTimeout"] = entry.timeout.count();
  });
}

json encode_send_batch(std::string_view queue_url, std::span<const OutgoingMessage> messages) {
  return encode_batch(queue_url, messages, [](json& out, const OutgoingMessage& message) {
    out["MessageBody"] = message.body;
    if (!message.attributes.empty())
      out["MessageAttributes"] = encode_attributes(message.attributes);
    if (message.delay.count() > 0) out["DelaySeconds"] = message.delay.count();
  });
}

std::vector<std::expected<std::string, Error>> decode_send_batch(const json& reply,
                                                                 std::size_t entries) {
  std::vector<std::expected<std::string, Error>> out(
      entries, std::unexpected(Error{.error_class = ErrorClass::Retryable,
                                     .code = "MissingBatchEntry",
                                     .message = "the reply did not mention this entry"}));
  if (auto ok = reply.find("Successful"); ok != reply.end() && ok->is_array()) {
    for (const auto& entry : *ok) {
      if (auto i = position_of(entry, entries)) out[*i] = string_at(entry, "MessageId");
    }
  }
  if (auto failed = reply.find("Failed"); failed != reply.end() && failed->is_array()) {
    for (const auto& entry : *failed) {
      if (auto i = position_of(entry, entries)) out[*i] = std::unexpected(entry_error(entry));
    }
  }
  return out;
}

consumer::BatchResult decode_batch_result(const json& reply, std::size_t entries) {
  consumer::BatchResult out;
  for (auto& sent : decode_send_batch(reply, entries)) {
    out.push_back(sent ? consumer::EntryResult{}
                       : consumer::EntryResult{std::unexpected(std::move(sent.error()))});
  }
  return out;
}

json encode_send(std::string_view queue_url, const OutgoingMessage& message) {
  json out{{"QueueUrl", queue_url}, {"MessageBody", message.body}};
  if (!message.attributes.empty()) out["MessageAttributes"] = encode_attributes(message.attributes);
  if (message.delay.count() > 0) out["DelaySeconds"] = message.delay.count();
  return out;
}

std::expected<std::string, Error> decode_message_id(const json& reply) {
  auto id = string_at(reply, "MessageId");
  if (id.empty()) return std::unexpected(malformed("reply without MessageId"));
  return id;
}

json encode_create_queue(std::string_view name, const QueueAttributes& attributes) {
  json out{{"QueueName", name}};
  if (!attributes.empty()) out["Attributes"] = attributes;
  return out;
}

std::expected<std::string, Error> decode_queue_url(const json& reply) {
  auto url = string_at(reply, "QueueUrl");
  if (url.empty()) return std::unexpected(malformed("reply without QueueUrl"));
  return url;
}

std::expected<QueueAttributes, Error> decode_queue_attributes(const json& reply) {
  QueueAttributes out;
  auto attributes = reply.find("Attributes");
  if (attributes == reply.end()) return out;
  if (!attributes->is_object()) return std::unexpected(malformed("Attributes not an object"));
  for (const auto& [name, value] : attributes->items()) {
    if (value.is_string()) out.emplace(name, value.get<std::string>());
  }
  return out;
}

std::string redrive_policy(std::string_view dead_letter_arn, int max_receive_count) {
  return json{{"deadLetterTargetArn", dead_letter_arn},
              {"maxReceiveCount", std::to_string(max_receive_count)}}
      .dump();
}

}  // namespace ic::sqs
