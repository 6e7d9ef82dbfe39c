#include "testing/child_process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace ic::testing {
namespace {

using namespace std::chrono_literals;

// Reads stdout until the child announces its port; nullopt on EOF or after the deadline.
std::optional<int> wait_for_port(int fd, std::chrono::seconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  std::string pending;
  char buffer[4096];
  while (std::chrono::steady_clock::now() < deadline) {
    pollfd descriptor{.fd = fd, .events = POLLIN, .revents = 0};
    if (::poll(&descriptor, 1, 200) <= 0) continue;
    const auto n = ::read(fd, buffer, sizeof buffer);
    if (n <= 0) return std::nullopt;
    pending.append(buffer, static_cast<std::size_t>(n));
    for (auto newline = pending.find('\n'); newline != std::string::npos;
         newline = pending.find('\n')) {
      const auto line = nlohmann::json::parse(pending.substr(0, newline), nullptr, false);
      pending.erase(0, newline + 1);
      if (line.is_object() && line.value("event", "") == "listening") return line.value("port", 0);
    }
  }
  return std::nullopt;
}

void stop(pid_t pid) {
  ::kill(pid, SIGTERM);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (std::chrono::steady_clock::now() < deadline) {
    if (::waitpid(pid, nullptr, WNOHANG) == pid) return;
    std::this_thread::sleep_for(20ms);
  }
  ::kill(pid, SIGKILL);
  ::waitpid(pid, nullptr, 0);
}

std::vector<char*> null_terminated(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& string : strings) pointers.push_back(string.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

ListeningChild::ListeningChild(const std::string& name, std::vector<std::string> argv,
                               const std::vector<std::pair<std::string, std::string>>& extra_env,
                               const std::string& stderr_log) {
  std::vector<std::string> variables;
  for (char** entry = environ; *entry != nullptr; ++entry) variables.emplace_back(*entry);
  for (const auto& [variable, value] : extra_env) variables.push_back(variable + "=" + value);
  const auto envp = null_terminated(variables);
  const auto args = null_terminated(argv);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const int spawned =
      ::posix_spawn(&pid_, argv.front().c_str(), &actions, nullptr, args.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (spawned != 0) {
    ::close(out[0]);
    throw std::runtime_error("cannot start " + argv.front() + ": error " + std::to_string(spawned));
  }
  const auto port = wait_for_port(out[0], 60s);
  ::close(out[0]);  // the tools print nothing else on stdout that we need
  if (!port || *port <= 0) {
    stop(pid_);
    throw std::runtime_error(name + " did not announce a port; see " + stderr_log);
  }
  port_ = *port;
}

ListeningChild::~ListeningChild() {
  stop(pid_);
}

std::vector<std::string> python_module_argv(const std::string& module,
                                            std::vector<std::string> args) {
  std::vector<std::string> argv{std::string(IC_SOURCE_DIR) + "/.venv/bin/python", "-m", module};
  argv.insert(argv.end(), std::make_move_iterator(args.begin()),
              std::make_move_iterator(args.end()));
  return argv;
}

std::vector<std::pair<std::string, std::string>> python_module_env(
    std::vector<std::pair<std::string, std::string>> extra) {
  extra.emplace_back("PYTHONPATH", IC_SOURCE_DIR);
  return extra;
}

}  // namespace ic::testing
