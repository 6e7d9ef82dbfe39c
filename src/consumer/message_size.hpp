// SQS's size accounting (docs/design.md §5 "Sizes"): a message counts its body and, for each
// message attribute, the UTF-8 bytes of its name, its data type and its value (a Binary value by
// its decoded bytes). A queue's MaximumMessageSize bounds that sum, and a SendMessageBatch
// bounds the sum over its entries by the same number.
//
//   if (message_size(body, attributes) > limit) { /* SQS would refuse it for good */ }
//   for (auto [begin, end] : pack_batches(sizes, kMaxBatchEntries, limit)) send(begin, end);
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "consumer/queue_port.hpp"

namespace ic::consumer {

// The limits SQS lets a queue's MaximumMessageSize take, and its default.
inline constexpr std::size_t kMinMessageSize = 1024;
inline constexpr std::size_t kMaxMessageSize = 1024 * 1024;
inline constexpr std::size_t kDefaultMessageSize = 256 * 1024;

[[nodiscard]] std::size_t attribute_size(std::string_view name, const MessageAttribute& attribute);
[[nodiscard]] std::size_t message_size(std::string_view body, const MessageAttributes& attributes);

// Consecutive runs [begin, end) of `sizes`, in order, each of at most `max_entries` items whose
// sizes sum to at most `max_bytes`. An item larger than `max_bytes` is a run of its own: the
// caller refuses it (SQS would).
[[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> pack_batches(
    std::span<const std::size_t> sizes, std::size_t max_entries, std::size_t max_bytes);

}  // namespace ic::consumer
