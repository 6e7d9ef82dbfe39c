#include "app/system_adapters.hpp"

#include <openssl/rand.h>
#include <pthread.h>
#include <unistd.h>

#include <array>
#include <span>
#include <stdexcept>

#include "core/hex.hpp"

namespace ic::app {
namespace {

constexpr std::size_t kBlockBytes = RandomTokens::kTokensPerDraw * RandomTokens::kTokenBytes;

// Random bytes drawn from OpenSSL a block at a time: RAND_bytes asks getpid() on every call
// (its fork check), a system call per claim when each token drew its own. Each byte is handed
// out once. One block per thread, so callers on different threads share nothing.
struct RandomBlock {
  std::array<unsigned char, kBlockBytes> bytes{};
  std::size_t used = kBlockBytes;  // nothing left until the first draw
};

thread_local RandomBlock block;

// A forked child would hand out the bytes its parent has yet to use. The process forks only to
// exec at once (credential_process, through posix_spawn, which runs no fork handlers and whose
// child draws nothing), but a fork() that returns into this code would copy the block: the
// child starts with none. Only the forking thread lives on in a child, so its block is all
// there is to drop.
void drop_block_in_child() {
  block.used = kBlockBytes;
}

std::span<const unsigned char> fresh_bytes(std::size_t count) {
  static const bool registered = pthread_atfork(nullptr, nullptr, drop_block_in_child) == 0;
  if (!registered || count > kBlockBytes) {
    throw std::runtime_error("random token source unavailable");
  }
  if (count > kBlockBytes - block.used) {
    if (RAND_bytes(block.bytes.data(), static_cast<int>(kBlockBytes)) != 1) {
      throw std::runtime_error("OpenSSL RAND_bytes failed");  // no safe fallback for tokens
    }
    block.used = 0;
  }
  const auto bytes = std::span<const unsigned char>(block.bytes).subspan(block.used, count);
  block.used += count;
  return bytes;
}

std::string host_name() {
  std::array<char, 256> host{};
  if (gethostname(host.data(), host.size() - 1) != 0) host = {'?'};
  return std::string(host.data());
}

}  // namespace

std::string RandomTokens::next() {
  return to_hex(fresh_bytes(kTokenBytes));
}

std::string worker_identity() {
  return host_name() + "/" + std::to_string(getpid()) + "/" + to_hex(fresh_bytes(3));
}

std::string operator_identity(std::string_view user) {
  return std::string(user.empty() ? "unknown" : user) + "@" + host_name();
}

}  // namespace ic::app
