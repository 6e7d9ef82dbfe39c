#include "aws/credentials/process_runner.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <thread>

#include "core/small_file.hpp"

extern char** environ;

namespace ic::aws {
namespace {

using Clock = std::chrono::steady_clock;

class Fd {
 public:
  Fd() = default;
  ~Fd() { reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  [[nodiscard]] int get() const { return fd_; }
  void reset(int fd = -1) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = fd;
  }

 private:
  int fd_ = -1;
};

struct Pipe {
  Fd read;
  Fd write;
};

std::unexpected<ProcessFailure> failed(std::string reason) {
  return std::unexpected(ProcessFailure{.reason = std::move(reason)});
}

std::unexpected<ProcessFailure> timed_out(std::chrono::milliseconds timeout) {
  return std::unexpected(ProcessFailure{
      .timed_out = true,
      .reason = fmt::format("did not finish within {} ms (killed)", timeout.count())});
}

// Retryable like a timeout: the next process's run may finish.
std::unexpected<ProcessFailure> stopped() {
  return std::unexpected(
      ProcessFailure{.timed_out = true, .reason = "killed: the consumer is stopping"});
}

std::expected<void, ProcessFailure> open_pipe(Pipe& pipe) {
  std::array<int, 2> fds{};
  if (::pipe2(fds.data(), O_CLOEXEC) != 0) {
    return failed(fmt::format("cannot create a pipe: {}", errno_text(errno)));
  }
  pipe.read.reset(fds[0]);
  pipe.write.reset(fds[1]);
  return {};
}

// Spawn attributes and file actions, destroyed on every path.
struct SpawnSetup {
  posix_spawnattr_t attr{};
  posix_spawn_file_actions_t actions{};
  SpawnSetup() {
    posix_spawnattr_init(&attr);
    posix_spawn_file_actions_init(&actions);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

int status_of(int wait_status) {
  if (WIFEXITED(wait_status)) return WEXITSTATUS(wait_status);
  if (WIFSIGNALED(wait_status)) return 128 + WTERMSIG(wait_status);
  return 255;
}

// Reads what is there; false at end of file or error.
bool drain(int fd, std::string& into, std::size_t keep, bool& overflow) {
  std::array<char, 4096> buffer{};
  const ssize_t got = ::read(fd, buffer.data(), buffer.size());
  if (got < 0 && (errno == EINTR || errno == EAGAIN)) return true;
  if (got <= 0) return false;
  const auto bytes = static_cast<std::size_t>(got);
  const std::size_t room = keep > into.size() ? keep - into.size() : 0;
  into.append(buffer.data(), std::min(room, bytes));
  if (bytes > room) overflow = true;
  return true;
}

// How often a run looks at its stop token while the program runs.
constexpr std::chrono::milliseconds kStopCheck{100};

void kill_group(pid_t pid) {
  ::kill(-pid, SIGKILL);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace

std::expected<ProcessResult, ProcessFailure> run_process(const std::vector<std::string>& argv,
                                                         const ProcessLimits& limits) {
  if (argv.empty()) return failed("no program to run");
  Pipe out, err;
  if (auto opened = open_pipe(out); !opened) return std::unexpected(opened.error());
  if (auto opened = open_pipe(err); !opened) return std::unexpected(opened.error());

  SpawnSetup setup;
  posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&setup.actions, out.write.get(), STDOUT_FILENO);
  posix_spawn_file_actions_adddup2(&setup.actions, err.write.get(), STDERR_FILENO);
  sigset_t none, defaults;
  sigemptyset(&none);
  sigemptyset(&defaults);
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) sigaddset(&defaults, sig);
  posix_spawnattr_setsigmask(&setup.attr, &none);
  posix_spawnattr_setsigdefault(&setup.attr, &defaults);
  posix_spawnattr_setpgroup(&setup.attr, 0);
  posix_spawnattr_setflags(&setup.attr,
                           POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP);

  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  if (const int rc =
          ::posix_spawnp(&pid, args[0], &setup.actions, &setup.attr, args.data(), environ);
      rc != 0) {
    return failed(fmt::format("cannot start the program: {}", errno_text(rc)));
  }
  out.write.reset();
  err.write.reset();

  const auto deadline = Clock::now() + limits.timeout;
  ProcessResult result;
  bool out_open = true, err_open = true, too_much = false, ignored = false;
  while (out_open || err_open) {
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    if (left.count() <= 0) {
      kill_group(pid);
      return timed_out(limits.timeout);
    }
    if (limits.cancel.stop_requested()) {
      kill_group(pid);
      return stopped();
    }
    std::array<pollfd, 2> fds{pollfd{out_open ? out.read.get() : -1, POLLIN, 0},
                              pollfd{err_open ? err.read.get() : -1, POLLIN, 0}};
    const auto wait = std::min(left, kStopCheck);
    if (::poll(fds.data(), fds.size(), static_cast<int>(wait.count())) < 0 && errno != EINTR) {
      kill_group(pid);
      return failed(fmt::format("cannot read its output: {}", errno_text(errno)));
    }
    if (out_open && fds[0].revents != 0) {
      out_open = drain(out.read.get(), result.out, limits.max_stdout, too_much);
    }
    if (err_open && fds[1].revents != 0) {
      err_open = drain(err.read.get(), result.err, limits.max_stderr, ignored);
    }
    if (too_much) {
      kill_group(pid);
      return failed(fmt::format("wrote more than {} bytes to stdout (killed)", limits.max_stdout));
    }
  }
  // Both pipes are closed; the program is exiting, or went on without them until the deadline.
  int status = 0;
  for (;;) {
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return failed("lost track of the program");
    if (Clock::now() >= deadline) {
      kill_group(pid);
      return timed_out(limits.timeout);
    }
    if (limits.cancel.stop_requested()) {
      kill_group(pid);
      return stopped();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds{5});
  }
  result.exit_status = status_of(status);
  return result;
}

}  // namespace ic::aws
