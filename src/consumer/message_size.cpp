#include "consumer/message_size.hpp"

namespace ic::consumer {
namespace {

// A Binary value travels base64-encoded, but SQS counts the bytes it stands for.
std::size_t decoded_base64_size(std::string_view value) {
  const std::size_t rem = value.size() % 4;
  if (rem != 0) return value.size() / 4 * 3 + rem * 3 / 4;  // unpadded
  std::size_t padding = 0;
  while (padding < 2 && padding < value.size() && value[value.size() - 1 - padding] == '=') {
    ++padding;
  }
  return value.size() / 4 * 3 - padding;
}

}  // namespace

std::size_t attribute_size(std::string_view name, const MessageAttribute& attribute) {
  const bool binary = attribute.data_type.starts_with("Binary");
  return name.size() + attribute.data_type.size() +
         (binary ? decoded_base64_size(attribute.value) : attribute.value.size());
}

std::size_t message_size(std::string_view body, const MessageAttributes& attributes) {
  std::size_t total = body.size();
  for (const auto& [name, attribute] : attributes) total += attribute_size(name, attribute);
  return total;
}

std::vector<std::pair<std::size_t, std::size_t>> pack_batches(std::span<const std::size_t> sizes,
                                                              std::size_t max_entries,
                                                              std::size_t max_bytes) {
  std::vector<std::pair<std::size_t, std::size_t>> runs;
  std::size_t begin = 0;
  std::size_t bytes = 0;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    const bool full = i - begin == max_entries || bytes + sizes[i] > max_bytes;
    if (i > begin && full) {
      runs.emplace_back(begin, i);
      begin = i;
      bytes = 0;
    }
    bytes += sizes[i];
  }
  if (begin < sizes.size()) runs.emplace_back(begin, sizes.size());
  return runs;
}

}  // namespace ic::consumer
