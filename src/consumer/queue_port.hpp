// The queue port the listener container drives: receive, batched delete and visibility
// changes, and forwarding to a dead-letter queue. Generic: nothing here knows the business.
//
//   auto got = co_await queue.receive(3, std::chrono::seconds{20});
//   if (got) for (auto& m : *got) { /* handle */ }
//   std::vector<DeleteEntry> acks{{.message_id = m.message_id, .receipt_handle =
//   m.receipt_handle}}; auto reply = co_await queue.delete_batch(acks);  // reply->at(i): acks[i]
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <map>
#include <span>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "core/error.hpp"
#include "core/task.hpp"
#include "core/time.hpp"

namespace ic::consumer {

// A message attribute. SQS types are String, Number and Binary (with optional ".suffix");
// Binary values are carried base64-encoded, as on the wire.
struct MessageAttribute {
  std::string data_type = "String";
  std::string value;
  friend bool operator==(const MessageAttribute&, const MessageAttribute&) = default;
};

using MessageAttributes = std::map<std::string, MessageAttribute, std::less<>>;

// One delivery. The same message (message_id) can be delivered again, even twice inside one
// receive on a standard queue; receipt_handle identifies this delivery.
struct Message {
  std::string message_id;
  std::string receipt_handle;
  std::string body;
  int receive_count = 1;                                       // ApproximateReceiveCount
  Instant sent_at{};                                           // SentTimestamp
  std::map<std::string, std::string, std::less<>> attributes;  // all system attributes as sent
  MessageAttributes message_attributes;
};

struct DeleteEntry {
  std::string message_id;  // for logs and metrics only; never sent as the batch entry id
  std::string receipt_handle;
};

struct VisibilityEntry {
  std::string message_id;  // for logs and metrics only
  std::string receipt_handle;
  std::chrono::seconds timeout{0};  // from now; 0 makes the message visible at once
};

// Per-entry answer of a batch call, by POSITION: result[i] answers entries[i]. Entries are
// never matched by message id, because a standard queue may hand out one message twice in a
// single receive and both deliveries can then sit in the same batch.
using EntryResult = std::expected<void, Error>;
using BatchResult = std::vector<EntryResult>;

inline constexpr std::size_t kMaxBatchEntries = 10;           // SQS limit per batch call
inline constexpr int kMaxReceiveMessages = 10;                // SQS limit per ReceiveMessage
inline constexpr std::chrono::seconds kMaxVisibility{43200};  // 12 hours, SQS limit

// Thread-safety: every method returns a task awaited at once on an event loop's thread; the
// container has polls, acknowledgements and heartbeats in flight at once.
// Ownership: the port copies what it needs; spans and views need only live until the task ends.
// Waiting: receive() finishes within `wait` (long poll) and may return fewer messages than
// asked, or none; every other call takes one round trip (plus the port's own retries).
// Errors: an error of the whole call means no entry is known to have taken effect (an
// `ambiguous` one: some may have); a BatchResult means the call was answered and each entry
// has its own outcome.
class QueuePort {
 public:
  virtual ~QueuePort() = default;

  using Received = std::expected<std::vector<Message>, Error>;
  using BatchReply = std::expected<BatchResult, Error>;

  // Up to `max_messages` (1..10) deliveries, each with ApproximateReceiveCount, SentTimestamp
  // and all message attributes. Once `stop` is requested (on the loop's thread) the poll is cut
  // short and returns what it has (usually nothing); the stop itself is not an error.
  [[nodiscard]] virtual Task<Received> receive(int max_messages, std::chrono::seconds wait,
                                               std::stop_token stop = {}) = 0;

  // At most kMaxBatchEntries entries; the result has exactly entries.size() elements.
  [[nodiscard]] virtual Task<BatchReply> delete_batch(std::span<const DeleteEntry> entries) = 0;

  // At most kMaxBatchEntries entries; the result has exactly entries.size() elements.
  [[nodiscard]] virtual Task<BatchReply> change_visibility_batch(
      std::span<const VisibilityEntry> entries) = 0;

  // Sends `body` unchanged to the dead-letter queue with `attributes`. A copy too large for the
  // DLQ (consumer/message_size.hpp) is refused for good (a permanent error), by SQS or by a
  // port that counts before sending.
  [[nodiscard]] virtual Task<std::expected<void, Error>> send_to_dlq(
      std::string_view body, const MessageAttributes& attributes) = 0;
};

}  // namespace ic::consumer
