// A bearer token kept in a file that someone else rotates (a Kubernetes secret volume, a
// vault agent). The event loop never touches the file: a watcher thread of its own checks it
// every second -- one stat(2) -- and re-reads it when its inode, size or modification time
// changed, so a rotated token is used without a restart, and current() only copies what the
// watcher read last. reload() has the watcher re-read the file unconditionally, for the one
// retry after the server answered 401, and waits for it without blocking the loop.
//
//   bank::BearerTokenFile token("/var/run/secrets/bank/token");   // reads it once, now
//   if (auto checked = token.current(); !checked) fail_start_up(checked.error());
//   request.headers.emplace_back("Authorization", "Bearer " + *token.current());
//
// The token is never put in an error or a log line.
#pragma once

#include <sys/types.h>

#include <expected>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "core/task.hpp"
#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic::bank {

// Thread-safety: current() from any thread; reload() on an event loop's thread (its task
// resumes there). Ownership: owns its watcher thread, which the destructor stops; a reload()
// must not be in flight then.
class BearerTokenFile {
 public:
  using Result = std::expected<std::string, std::string>;
  static constexpr Millis kCheckInterval{1000};

  // Reads the file once on the calling thread (start-up: a bad file stops it), then watches it.
  explicit BearerTokenFile(std::string path, Millis check_interval = kCheckInterval);
  ~BearerTokenFile();
  BearerTokenFile(const BearerTokenFile&) = delete;
  BearerTokenFile& operator=(const BearerTokenFile&) = delete;

  // The token as last read: no I/O. Errors (one line, no path, no content): the file cannot be
  // read, is empty, larger than 16 KiB, or holds characters a header must not carry (anything
  // but visible ASCII without spaces).
  [[nodiscard]] Result current() const;
  // The file re-read by the watcher whatever its metadata says; the caller's loop goes on
  // meanwhile.
  [[nodiscard]] Task<Result> reload();

 private:
  struct Version {
    dev_t device = 0;
    ino_t inode = 0;
    off_t size = -1;
    long long mtime_ns = -1;
    bool operator==(const Version&) const = default;
  };
  // Watcher thread (and the constructor): stat, then read when changed or `forced`.
  [[nodiscard]] Result check(bool forced);
  [[nodiscard]] Result read(const Version& seen);
  void watch();

  const std::string path_;
  const Millis interval_;
  // The watcher's own: touched by the constructor and then only by its thread.
  std::string token_;
  Version version_;

  mutable Mutex mutex_;
  CondVar wake_;
  Result latest_ GUARDED_BY(mutex_);
  std::vector<std::function<void(const Result&)>> reloads_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread watcher_;
};

}  // namespace ic::bank
