#include "bank_http/fake_bank_process.hpp"

#include <fcntl.h>
#include <httplib.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

extern char** environ;

namespace ic::testing {
namespace {

using namespace std::chrono_literals;

// Reads stdout until the server announces its port; nullopt on EOF or after the deadline.
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

}  // namespace

std::unique_ptr<FakeBankProcess> FakeBankProcess::start() {
  const std::string root = IC_SOURCE_DIR;
  const std::string python = root + "/.venv/bin/python";
  const std::string log = (std::filesystem::temp_directory_path() /
                           ("fake-bank-" + std::to_string(::getpid()) + ".log"))
                              .string();

  // `-m tools.fake_bank` resolves from the repository root, whatever ctest's working directory.
  std::vector<std::string> variables;
  for (char** entry = environ; *entry != nullptr; ++entry) variables.emplace_back(*entry);
  variables.push_back("PYTHONPATH=" + root);
  std::vector<char*> envp;
  for (auto& variable : variables) envp.push_back(variable.data());
  envp.push_back(nullptr);

  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<std::string> args = {python, "-m", "tools.fake_bank", "--port", "0", "--seed", "7"};
  std::vector<char*> argv;
  for (auto& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int spawned =
      ::posix_spawn(&pid, python.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (spawned != 0) {
    ::close(out[0]);
    throw std::runtime_error("cannot start " + python + ": error " + std::to_string(spawned));
  }
  const auto port = wait_for_port(out[0], 60s);
  ::close(out[0]);
  if (!port || *port <= 0) {
    stop(pid);
    throw std::runtime_error("fake bank did not announce a port; see " + log);
  }
  return std::unique_ptr<FakeBankProcess>(new FakeBankProcess(pid, *port));
}

FakeBankProcess::~FakeBankProcess() {
  stop(pid_);
}

std::string FakeBankProcess::base_url() const {
  return "http://127.0.0.1:" + std::to_string(port_);
}

bool FakeBankProcess::reset() const {
  httplib::Client client("127.0.0.1", port_);
  const auto reply = client.Post("/admin/reset");
  return reply && reply->status == 200;
}

bool FakeBankProcess::set_faults(const std::string& json) const {
  httplib::Client client("127.0.0.1", port_);
  const auto reply = client.Post("/admin/faults", json, "application/json");
  return reply && reply->status == 200;
}

std::optional<nlohmann::json> FakeBankProcess::ledger() const {
  httplib::Client client("127.0.0.1", port_);
  const auto reply = client.Get("/v1/ledger");
  if (!reply || reply->status != 200) return std::nullopt;
  return nlohmann::json::parse(reply->body);
}

FakeBankProcess& shared_fake_bank() {
  static const std::unique_ptr<FakeBankProcess> bank = FakeBankProcess::start();
  return *bank;
}

}  // namespace ic::testing
