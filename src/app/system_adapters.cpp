#include "app/system_adapters.hpp"

#include <openssl/rand.h>
#include <unistd.h>

#include <array>
#include <span>
#include <stdexcept>

#include "core/hex.hpp"

namespace ic::app {
namespace {

std::string random_hex(std::size_t bytes) {
  std::array<unsigned char, 32> buffer{};
  if (bytes > buffer.size() || RAND_bytes(buffer.data(), static_cast<int>(bytes)) != 1) {
    throw std::runtime_error("OpenSSL RAND_bytes failed");  // no safe fallback for tokens
  }
  return to_hex(std::span(buffer).first(bytes));
}

std::string host_name() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host = {'?'};
  return std::string(host.data());
}

}  // namespace

std::string RandomTokens::next() {
  return random_hex(16);
}

std::string worker_identity() {
  return host_name() + "/" + std::to_string(getpid()) + "/" + random_hex(3);
}

std::string operator_identity(std::string_view user) {
  return std::string(user.empty() ? "unknown" : user) + "@" + host_name();
}

}  // namespace ic::app
