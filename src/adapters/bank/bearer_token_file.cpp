#include "adapters/bank/bearer_token_file.hpp"

#include <pthread.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <memory>
#include <utility>

#include "core/small_file.hpp"
#include "core/thread_guard.hpp"
#include "event/event_loop.hpp"
#include "event/wait_queue.hpp"

namespace ic::bank {
namespace {

constexpr std::size_t kMaxTokenBytes = 16 * 1024;

bool header_safe(std::string_view token) {
  return std::ranges::all_of(token, [](char c) { return c > ' ' && c < '\x7f'; });
}

}  // namespace

BearerTokenFile::BearerTokenFile(std::string path, Millis check_interval)
    : path_(std::move(path)), interval_(check_interval), latest_(check(false)) {
  // The watcher takes no signals: it may start before `run` blocks SIGTERM for its own threads,
  // and a signal the kernel gave it would take the default action, ending the process.
  sigset_t all;
  sigset_t before;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  watcher_ = std::thread([this] { run_guarded("token-file", nullptr, [this] { watch(); }); });
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
}

BearerTokenFile::~BearerTokenFile() {
  {
    const MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_all();
  watcher_.join();
}

BearerTokenFile::Result BearerTokenFile::current() const {
  const MutexLock lock(mutex_);
  return latest_;
}

Task<BearerTokenFile::Result> BearerTokenFile::reload() {
  // What the watcher hands back, kept alive by both sides; only the loop's thread reads it.
  struct Pending {
    explicit Pending(event::EventLoop& loop) : woken(loop) {}
    event::WaitQueue woken;
    std::optional<Result> result;
  };
  event::EventLoop& loop = *event::EventLoop::current();
  auto pending = std::make_shared<Pending>(loop);
  {
    const MutexLock lock(mutex_);
    reloads_.emplace_back([pending, &loop](const Result& result) {
      loop.post([pending, result] {
        pending->result = result;
        pending->woken.notify_all();
      });
    });
  }
  wake_.notify_all();
  while (!pending->result) co_await pending->woken.wait();
  co_return std::move(*pending->result);
}

void BearerTokenFile::watch() {
  MutexLock lock(mutex_);
  while (!stopping_) {
    (void)wake_.wait_for(mutex_, interval_,
                         [this]() REQUIRES(mutex_) { return stopping_ || !reloads_.empty(); });
    if (stopping_) return;
    auto waiting = std::exchange(reloads_, {});
    lock.unlock();  // the file is read without the lock: current() never waits for it
    Result result = check(!waiting.empty());
    lock.lock();
    latest_ = result;
    for (const auto& done : waiting) done(result);
  }
}

BearerTokenFile::Result BearerTokenFile::check(bool forced) {
  struct stat info {};
  if (::stat(path_.c_str(), &info) != 0) {
    return std::unexpected("cannot be read: " + errno_text(errno));
  }
  const Version seen{.device = info.st_dev,
                     .inode = info.st_ino,
                     .size = info.st_size,
                     .mtime_ns = static_cast<long long>(info.st_mtim.tv_sec) * 1'000'000'000 +
                                 info.st_mtim.tv_nsec};
  if (!forced && seen == version_ && !token_.empty()) return token_;
  return read(seen);
}

BearerTokenFile::Result BearerTokenFile::read(const Version& seen) {
  auto text = read_small_file(path_, kMaxTokenBytes);
  if (!text) return std::unexpected(std::move(text.error()));
  std::string token = trim_blank(std::move(*text));
  if (token.empty()) return std::unexpected("is empty");
  if (!header_safe(token)) {
    return std::unexpected("must hold one token of visible ASCII characters without spaces");
  }
  token_ = token;
  version_ = seen;
  return token;
}

}  // namespace ic::bank
