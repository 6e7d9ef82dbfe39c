#include "moto_fixture.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace ic::dynamodb::testing {
namespace {

using namespace std::chrono_literals;

// Reads stdout until moto announces its port; nullopt on EOF or after the deadline.
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
      auto line = nlohmann::json::parse(pending.substr(0, newline), nullptr, false);
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

std::unique_ptr<MotoServer> MotoServer::start(
    std::vector<std::pair<std::string, std::string>> env) {
  const std::string root = IC_SOURCE_DIR;
  const std::string python = root + "/.venv/bin/python";
  const std::string script = root + "/tools/moto_server.py";
  const std::string log =
      fmt::format("{}/moto-{}.log", std::filesystem::temp_directory_path().string(), ::getpid());

  std::vector<std::string> variables;
  for (char** entry = environ; *entry != nullptr; ++entry) variables.emplace_back(*entry);
  for (const auto& [name, value] : env) variables.push_back(name + "=" + value);
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
  std::string level = "--log-level=warning";
  std::vector<char*> argv = {const_cast<char*>(python.c_str()), const_cast<char*>(script.c_str()),
                             level.data(), nullptr};
  pid_t pid = 0;
  const int spawned =
      ::posix_spawn(&pid, python.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  ::close(out[1]);
  if (spawned != 0) {
    ::close(out[0]);
    throw std::runtime_error(fmt::format("cannot start {}: error {}", python, spawned));
  }
  const auto port = wait_for_port(out[0], 60s);
  ::close(out[0]);  // moto prints nothing else on stdout that we need
  if (!port || *port <= 0) {
    stop(pid);
    throw std::runtime_error(fmt::format("moto did not announce a port; see {}", log));
  }
  return std::unique_ptr<MotoServer>(
      new MotoServer(pid, fmt::format("http://127.0.0.1:{}", *port), log));
}

MotoServer::~MotoServer() {
  stop(pid_);
  std::error_code ignored;
  std::filesystem::remove(log_, ignored);
}

bool MotoServer::reset() const {
  aws::CurlHttpTransport transport;
  auto reply = transport.send({.method = "POST", .url = endpoint_ + "/moto-api/reset"},
                              {.connect = 2000ms, .total = 10000ms});
  return reply && reply->status == 200;
}

MotoServer& shared_moto() {
  static const std::unique_ptr<MotoServer> server = MotoServer::start({});
  return *server;
}

DynamoDbWiring::DynamoDbWiring(const std::string& endpoint, std::string key_id, std::string secret,
                               aws::HttpTransport* transport)
    : credentials(std::move(key_id), std::move(secret)),
      // Backoff in milliseconds keeps retry tests quick; the policy logic is the production one.
      retry(aws::RetryConfig{.transient_base = 5ms, .throttling_base = 5ms}),
      client({.service = "dynamodb",
              .signing_name = "dynamodb",
              .target_prefix = "DynamoDB_20120810",
              .endpoint = endpoint,
              .region = "us-east-1",
              .timeouts = {.connect = 2000ms, .total = 10000ms}},
             transport != nullptr ? *transport : curl, credentials, retry) {}

}  // namespace ic::dynamodb::testing
