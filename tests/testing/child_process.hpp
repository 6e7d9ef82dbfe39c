// A local test server (a Python tool under .venv) as a child of a C++ test: spawned with its
// stderr in a log file, ready once it prints {"event":"listening","port":N} on stdout (the
// tools bind port 0 and announce the port they got), stopped with SIGTERM and, after a
// deadline, SIGKILL. Shared by the fake-bank and moto fixtures.
//
//   ListeningChild child("moto", python_module_argv("tools.moto_server", {"--log-level=warning"}),
//                        python_module_env(), log_path);
//   fmt::format("http://127.0.0.1:{}", child.port());
#pragma once

#include <sys/types.h>

#include <string>
#include <utility>
#include <vector>

namespace ic::testing {

// Ownership: owns the child process, which ends with the object. Not thread-safe.
class ListeningChild {
 public:
  // Runs argv[0] with `argv` and our environment plus `extra_env`. Throws std::runtime_error,
  // naming `name` and the log, when the child cannot start or announces no port in a minute.
  ListeningChild(const std::string& name, std::vector<std::string> argv,
                 const std::vector<std::pair<std::string, std::string>>& extra_env,
                 const std::string& stderr_log);
  ~ListeningChild();
  ListeningChild(const ListeningChild&) = delete;
  ListeningChild& operator=(const ListeningChild&) = delete;

  [[nodiscard]] int port() const { return port_; }

 private:
  pid_t pid_ = 0;
  int port_ = 0;
};

// The repository's Python tools run as modules of its `tools` package (`python -m
// tools.moto_server`), never by path: the argv that runs `module` with the venv's interpreter,
// and `extra` plus the PYTHONPATH (the repository root) under which the package imports,
// whatever ctest's working directory.
[[nodiscard]] std::vector<std::string> python_module_argv(const std::string& module,
                                                          std::vector<std::string> args);
[[nodiscard]] std::vector<std::pair<std::string, std::string>> python_module_env(
    std::vector<std::pair<std::string, std::string>> extra = {});

}  // namespace ic::testing
