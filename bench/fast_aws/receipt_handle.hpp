// SQS receipt handles, "q<queue>.m<message>.r<receive>": written on each receive, and read
// back to tell the latest receipt of a message from an earlier one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "fast_aws/sqs_queue.hpp"

namespace ic::bench::fast_aws {

std::string receipt_handle(const Queue& queue, std::uint64_t seq, std::int64_t receives);

// What a receipt handle refers to. Current: the latest receipt of a message that is still
// there. Stale: an earlier receipt of a message received again since. Gone: a message this
// queue had and deleted. Invalid: never issued by this queue.
enum class Receipt { Current, Stale, Gone, Invalid };

struct Located {
  Receipt receipt;
  std::uint64_t seq = 0;
  Message* message = nullptr;
};

Located locate(Queue& queue, std::string_view handle);

}  // namespace ic::bench::fast_aws
