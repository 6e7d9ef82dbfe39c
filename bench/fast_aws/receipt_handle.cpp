// SQS receipt handles (receipt_handle.hpp).
#include "fast_aws/receipt_handle.hpp"

#include <charconv>
#include <optional>

#include "fast_aws/json_text.hpp"

namespace ic::bench::fast_aws {

std::string receipt_handle(const Queue& queue, std::uint64_t seq, std::int64_t receives) {
  // Appended rather than "q" + text: GCC 12 -O3 raises a false -Wrestrict on a literal plus a
  // std::string it cannot see the size of (GCC bug 105329).
  std::string handle = "q";
  put_number(handle, queue.index);
  handle += ".m";
  put_number(handle, static_cast<std::int64_t>(seq));
  handle += ".r";
  put_number(handle, receives);
  return handle;
}

Located locate(Queue& queue, std::string_view handle) {
  const auto field = [&](char tag) -> std::optional<std::uint64_t> {
    if (handle.empty() || handle.front() != tag) return std::nullopt;
    handle.remove_prefix(1);
    std::uint64_t value = 0;
    const auto [end, ec] = std::from_chars(handle.data(), handle.data() + handle.size(), value);
    if (ec != std::errc{}) return std::nullopt;
    handle.remove_prefix(static_cast<std::size_t>(end - handle.data()));
    if (!handle.empty() && handle.front() == '.') handle.remove_prefix(1);
    return value;
  };
  const auto index = field('q');
  const auto seq = field('m');
  const auto receives = field('r');
  if (!index || !seq || !receives || !handle.empty() || *index != queue.index || *seq == 0 ||
      *seq >= queue.next_seq || *receives == 0) {
    return {Receipt::Invalid};
  }
  const auto it = queue.messages.find(*seq);
  if (it == queue.messages.end()) return {Receipt::Gone, *seq};
  Message& message = it->second;
  const auto latest = static_cast<std::uint64_t>(message.receives);
  if (*receives > latest) return {Receipt::Invalid};
  return {*receives < latest ? Receipt::Stale : Receipt::Current, *seq, &message};
}

}  // namespace ic::bench::fast_aws
