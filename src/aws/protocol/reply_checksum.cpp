#include "aws/protocol/reply_checksum.hpp"

#include <fmt/format.h>
#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <limits>

namespace ic::aws {

std::uint32_t crc32_of(std::string_view bytes) {
  // zlib's length is a uInt; feed large bodies in chunks rather than assume they fit.
  uLong crc = crc32(0L, Z_NULL, 0);
  while (!bytes.empty()) {
    const auto chunk = std::min<std::size_t>(bytes.size(), std::numeric_limits<uInt>::max());
    crc = crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(chunk));
    bytes.remove_prefix(chunk);
  }
  return static_cast<std::uint32_t>(crc);
}

bool reply_crc32_matches(const http::HttpResponse& response) {
  const auto* header = response.header("x-amz-crc32");
  if (!header) return true;
  std::uint32_t expected = 0;
  const char* end = header->data() + header->size();
  const auto [ptr, ec] = std::from_chars(header->data(), end, expected);
  if (ec != std::errc{} || ptr != end || header->empty()) return false;
  return expected == crc32_of(response.body);
}

AwsError crc32_check_failed(const http::HttpResponse& response) {
  const auto* header = response.header("x-amz-crc32");
  return AwsError{
      {.error_class = ErrorClass::Retryable,
       .code = "CRC32CheckFailed",
       .message = fmt::format("x-amz-crc32 {} but the body's CRC-32 is {}",
                              header ? *header : std::string("<absent>"), crc32_of(response.body)),
       .ambiguous = true},
      response.status,
      response.body};
}

}  // namespace ic::aws
