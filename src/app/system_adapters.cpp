#include "app/system_adapters.hpp"

#include <openssl/rand.h>
#include <unistd.h>

#include <array>
#include <stdexcept>

namespace ic::app {
namespace {

std::string random_hex(std::size_t bytes) {
  std::array<unsigned char, 32> buffer{};
  if (bytes > buffer.size() || RAND_bytes(buffer.data(), static_cast<int>(bytes)) != 1) {
    throw std::runtime_error("OpenSSL RAND_bytes failed");  // no safe fallback for tokens
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  for (std::size_t i = 0; i < bytes; ++i) {
    out += kHex[buffer[i] >> 4];
    out += kHex[buffer[i] & 0x0f];
  }
  return out;
}

}  // namespace

Instant SystemClock::now() const {
  return std::chrono::time_point_cast<Millis>(std::chrono::system_clock::now());
}

std::string RandomTokens::next() {
  return random_hex(16);
}

std::string worker_identity() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host = {'?'};
  return std::string(host.data()) + "/" + std::to_string(getpid()) + "/" + random_hex(3);
}

}  // namespace ic::app
