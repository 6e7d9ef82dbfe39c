// Sending SQS messages: SendMessage and SendMessageBatch, and storing each message.
#include <algorithm>
#include <chrono>
#include <cstdio>

#include "fast_aws/json_text.hpp"
#include "fast_aws/request_members.hpp"
#include "fast_aws/sqs.hpp"
#include "fast_aws/sqs_batch.hpp"
#include "fast_aws/sqs_faults.hpp"

namespace ic::bench::fast_aws {
namespace {

using nlohmann::json;

// SQS accepts #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF; the
// body is already valid UTF-8 (the JSON parser checked), so only control bytes and the
// surrogate and non-character ranges remain to refuse. Checking the control bytes is what
// matters for the bench; the rest is left to the JSON parser's UTF-8 check.
bool valid_body(std::string_view body) {
  return std::ranges::none_of(body, [](char c) {
    const auto byte = static_cast<unsigned char>(c);
    return byte < 0x20 && byte != '\t' && byte != '\n' && byte != '\r';
  });
}

std::expected<Outgoing, EntryFault> outgoing(const json& entry, const Queue& queue) {
  Outgoing out;
  const std::string* body = string_member(entry, "MessageBody");
  if (body == nullptr || body->empty()) {
    return std::unexpected(
        EntryFault{&kMissingParameter, "The request must contain the parameter MessageBody."});
  }
  if (!valid_body(*body)) {
    return std::unexpected(EntryFault{&kInvalidMessageContents, "Invalid characters found."});
  }
  out.body = *body;
  out.size = body->size();
  auto delay = integer_member(entry, "DelaySeconds", 0, 900, queue.delay_seconds);
  if (!delay) return std::unexpected(EntryFault{&kInvalidParameter, delay.error()});
  out.delay = *delay;
  if (const auto attributes = entry.find("MessageAttributes");
      attributes != entry.end() && !attributes->is_null()) {
    if (!attributes->is_object() || attributes->size() > 10) {
      return std::unexpected(
          EntryFault{&kInvalidParameter, "Invalid MessageAttributes: at most 10 named values."});
    }
    for (const auto& [name, value] : attributes->items()) {
      const std::string* type = value.is_object() ? string_member(value, "DataType") : nullptr;
      const bool binary = type != nullptr && type->starts_with("Binary");
      const std::string* data = value.is_object()
                                    ? string_member(value, binary ? "BinaryValue" : "StringValue")
                                    : nullptr;
      if (type == nullptr || data == nullptr ||
          !(type->starts_with("String") || type->starts_with("Number") || binary)) {
        return std::unexpected(EntryFault{
            &kInvalidParameter, "Message attribute " + name + " has no valid DataType and value."});
      }
      std::string text = R"({"DataType":)";
      put_string(text, *type);
      text += binary ? R"(,"BinaryValue":)" : R"(,"StringValue":)";
      put_string(text, *data);
      text += '}';
      out.size += name.size() + type->size() + data->size();
      out.attributes.emplace_back(name, std::move(text));
    }
  }
  if (out.size > static_cast<std::size_t>(queue.maximum_message_size)) {
    return std::unexpected(
        EntryFault{&kInvalidParameter,
                   "One or more parameters are invalid. Reason: Message must be shorter than " +
                       number_text(queue.maximum_message_size) + " bytes."});
  }
  return out;
}

// What a send reports of a message it stored: "MessageId":..,"MD5OfMessageBody":..
void put_sent(std::string& out, const Message& message) {
  out += R"("MessageId":)";
  put_string(out, message.id);
  out += R"(,"MD5OfMessageBody":)";
  put_string(out, message.md5);
}

}  // namespace

const Message& Sqs::enqueue(Queue& queue, Outgoing&& out, std::vector<MHD_Connection*>& wake) {
  const std::uint64_t seq = queue.next_seq++;
  Message message{.id = message_id(),
                  .md5 = md5_.hex(out.body),
                  .attributes = std::move(out.attributes),
                  .sent_ms = epoch_ms()};
  message.body = std::move(out.body);
  if (out.delay > 0) {
    message.state = MessageState::Delayed;
    queue.timers.push({Steady::now() + std::chrono::seconds(out.delay), seq, 0});
    timers_changed_.notify_one();
  } else {
    queue.visible.push_back(seq);
  }
  ++queue.counts[static_cast<int>(message.state)];
  const Message& stored = queue.messages.emplace(seq, std::move(message)).first->second;
  if (out.delay == 0) take_waiters(queue, 1, wake);
  return stored;
}

std::string Sqs::message_id() {
  const std::uint64_t high = (random_() & 0xFFFFFFFFFFFF0FFFULL) | 0x0000000000004000ULL;
  const std::uint64_t low = (random_() & 0x3FFFFFFFFFFFFFFFULL) | 0x8000000000000000ULL;
  char text[40];
  std::snprintf(text, sizeof text, "%08llx-%04llx-%04llx-%04llx-%012llx",
                static_cast<unsigned long long>(high >> 32U),
                static_cast<unsigned long long>((high >> 16U) & 0xFFFFU),
                static_cast<unsigned long long>(high & 0xFFFFU),
                static_cast<unsigned long long>(low >> 48U),
                static_cast<unsigned long long>(low & 0xFFFFFFFFFFFFULL));
  return text;
}

Reply Sqs::send(const json& request) {
  std::vector<MHD_Connection*> wake;
  std::string body;
  {
    const std::scoped_lock lock(mutex_);
    auto queue = queue_of(request);
    if (!queue) return std::move(queue.error());
    auto out = outgoing(request, **queue);
    if (!out) return sqs_error(*out.error().fault, out.error().message);
    const Message& message = enqueue(**queue, std::move(*out), wake);
    body += '{';
    put_sent(body, message);
    body += '}';
  }
  resume(wake);
  return ok(std::move(body));
}

Reply Sqs::send_batch(const json& request) {
  std::vector<MHD_Connection*> wake;
  BatchReply reply;
  {
    const std::scoped_lock lock(mutex_);
    auto queue = queue_of(request);
    if (!queue) return std::move(queue.error());
    auto entries = batch_entries(request);
    if (!entries) return std::move(entries.error());
    std::vector<std::expected<Outgoing, EntryFault>> messages;
    std::size_t total = 0;
    for (const auto& entry : **entries) {
      messages.push_back(outgoing(entry, **queue));
      if (messages.back()) total += messages.back()->size;
    }
    if (total > static_cast<std::size_t>((*queue)->maximum_message_size)) {
      return sqs_error(kBatchTooLong, "Batch requests cannot be longer than " +
                                          number_text((*queue)->maximum_message_size) + " bytes.");
    }
    for (std::size_t i = 0; i < messages.size(); ++i) {
      const std::string& id = (**entries)[i]["Id"].get_ref<const std::string&>();
      if (!messages[i]) {
        reply.failure(id, messages[i].error());
        continue;
      }
      const Message& message = enqueue(**queue, std::move(*messages[i]), wake);
      std::string members = ",";
      put_sent(members, message);
      reply.success(id, members);
    }
  }
  resume(wake);
  return ok(std::move(reply).take());
}

}  // namespace ic::bench::fast_aws
