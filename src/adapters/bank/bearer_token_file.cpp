#include "adapters/bank/bearer_token_file.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cerrno>

#include "core/small_file.hpp"

namespace ic::bank {
namespace {

constexpr std::size_t kMaxTokenBytes = 16 * 1024;

bool header_safe(std::string_view token) {
  return std::ranges::all_of(token, [](char c) { return c > ' ' && c < '\x7f'; });
}

}  // namespace

std::expected<std::string, std::string> BearerTokenFile::current() {
  struct stat info {};
  if (::stat(path_.c_str(), &info) != 0) {
    return std::unexpected("cannot be read: " + errno_text(errno));
  }
  const Version seen{.device = info.st_dev,
                     .inode = info.st_ino,
                     .size = info.st_size,
                     .mtime_ns = static_cast<long long>(info.st_mtim.tv_sec) * 1'000'000'000 +
                                 info.st_mtim.tv_nsec};
  MutexLock lock(mutex_);
  if (seen == version_ && !token_.empty()) return token_;
  return read(seen);
}

std::expected<std::string, std::string> BearerTokenFile::reload() {
  MutexLock lock(mutex_);
  return read(Version{});
}

std::expected<std::string, std::string> BearerTokenFile::read(const Version& seen) {
  auto text = read_small_file(path_, kMaxTokenBytes);
  if (!text) return std::unexpected(std::move(text.error()));
  std::string token = trim_blank(std::move(*text));
  if (token.empty()) return std::unexpected("is empty");
  if (!header_safe(token)) {
    return std::unexpected("must hold one token of visible ASCII characters without spaces");
  }
  token_ = token;
  version_ = seen;  // after reload() an unknown version: the next current() reads once more
  return token;
}

}  // namespace ic::bank
