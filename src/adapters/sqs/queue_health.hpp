// What the consumer reads about a queue on its slow timer (GetQueueAttributes): the depth,
// exported as gauges, and the two settings the claim protocol leans on, checked at start-up.
//
//   auto health = co_await read_queue_health(sqs, queue_url);
//   if (health && health->depth.visible) gauge.set(*health->depth.visible);
#pragma once

#include <chrono>
#include <cstdint>
#include <expected>
#include <optional>
#include <string_view>

#include "adapters/sqs/sqs_client.hpp"
#include "core/error.hpp"

namespace ic::sqs {

// Each one absent when the reply did not carry it as a number.
struct QueueDepth {
  std::optional<std::uint64_t> visible;    // ApproximateNumberOfMessages
  std::optional<std::uint64_t> in_flight;  // ApproximateNumberOfMessagesNotVisible
  std::optional<std::uint64_t> delayed;    // ApproximateNumberOfMessagesDelayed
};

struct QueueSettings {
  std::optional<std::chrono::seconds> visibility_timeout;
  bool has_redrive_policy = false;
  // From the RedrivePolicy; absent when there is none or it names no readable count.
  std::optional<std::int64_t> max_receive_count;
};

struct QueueHealth {
  QueueDepth depth;
  QueueSettings settings;
};

// Never fails: whatever is missing or malformed is left absent.
[[nodiscard]] QueueHealth decode_queue_health(const QueueAttributes& attributes);

// One GetQueueAttributes for exactly the attributes above. Thread-safety and ownership: as
// SqsClient::get_queue_attributes.
[[nodiscard]] Task<std::expected<QueueHealth, Error>> read_queue_health(SqsClient& sqs,
                                                                        std::string_view queue_url);

}  // namespace ic::sqs
