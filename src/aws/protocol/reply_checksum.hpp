// DynamoDB's reply checksum: every reply carries `x-amz-crc32`, the CRC-32 (zlib's, as
// decimal text) of the body bytes as sent. The SDKs verify it and retry on a mismatch, since a
// body damaged on the way (a proxy, a bad NIC offload) may still parse as valid JSON.
//
//   if (!reply_crc32_matches(response)) return std::unexpected(crc32_check_failed(response));
#pragma once

#include <cstdint>
#include <string_view>

#include "aws/protocol/aws_error.hpp"
#include "http/http_transport.hpp"

namespace ic::aws {

[[nodiscard]] std::uint32_t crc32_of(std::string_view bytes);

// True when the reply has no `x-amz-crc32` header (other services, emulators that omit it) or
// the header's value equals the body's CRC-32; a value that is not a decimal uint32 fails.
[[nodiscard]] bool reply_crc32_matches(const http::HttpResponse& response);

// The error a mismatch is reported as: retryable (a new attempt gets a fresh reply) and
// ambiguous (the service did answer, so a write may have happened).
[[nodiscard]] AwsError crc32_check_failed(const http::HttpResponse& response);

}  // namespace ic::aws
