// A bearer token kept in a file that someone else rotates (a Kubernetes secret volume, a
// vault agent). The file is checked on every call -- one stat(2) -- and re-read when its inode,
// size or modification time changed, so a rotated token is used without a restart; reload()
// re-reads it unconditionally, for the one retry after the server answered 401.
//
//   bank::BearerTokenFile token("/var/run/secrets/bank/token");
//   if (auto checked = token.current(); !checked) fail_start_up(checked.error());
//   request.headers.emplace_back("Authorization", "Bearer " + *token.current());
//
// The token is never put in an error or a log line.
#pragma once

#include <sys/types.h>

#include <expected>
#include <string>

#include "core/thread_annotations.hpp"

namespace ic::bank {

// Thread-safety: current() and reload() may be called concurrently; one mutex guards the
// cached token, held across the stat and the read. Ownership: owns its cache only.
class BearerTokenFile {
 public:
  explicit BearerTokenFile(std::string path) : path_(std::move(path)) {}

  // The token, re-read first when the file changed since the last read. Errors (one line, no
  // path, no content): the file cannot be read, is empty, larger than 16 KiB, or holds
  // characters a header must not carry (anything but visible ASCII without spaces).
  [[nodiscard]] std::expected<std::string, std::string> current();
  // Re-reads the file whatever its metadata says.
  [[nodiscard]] std::expected<std::string, std::string> reload();

 private:
  struct Version {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = -1;
    long long mtime_ns = -1;
    bool operator==(const Version&) const = default;
  };
  [[nodiscard]] std::expected<std::string, std::string> read(const Version& seen) REQUIRES(mutex_);

  const std::string path_;
  Mutex mutex_;
  std::string token_ GUARDED_BY(mutex_);
  Version version_ GUARDED_BY(mutex_);
};

}  // namespace ic::bank
