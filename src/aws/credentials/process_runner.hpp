// Runs a helper program (the profile's credential_process) without a shell and collects its
// output, bounded in time and size.
//
//   auto done = run_process({"/opt/bin/creds", "--json"}, {.timeout = 60s});
//   if (done && done->exit_status == 0) parse(done->out);
//
// The child gets the parent's environment, /dev/null as stdin, pipes as stdout and stderr, an
// empty signal mask with default dispositions (the consumer blocks SIGTERM in every thread,
// which a child must not inherit), and its own process group, so a timeout kills everything
// it started. The program is looked up on PATH when it has no '/'.
#pragma once

#include <chrono>
#include <cstddef>
#include <expected>
#include <stop_token>
#include <string>
#include <vector>

namespace ic::aws {

struct ProcessLimits {
  std::chrono::milliseconds timeout{60'000};
  std::size_t max_stdout = 64 * 1024;  // more is an error: the child is killed
  std::size_t max_stderr = 4 * 1024;   // more is dropped silently
  // Once stop is requested the program is killed and the run fails: a consumer stopping does
  // not wait out a credential_process that hangs (seen within kStopCheck).
  std::stop_token cancel;
};

struct ProcessResult {
  int exit_status = 0;  // the exit code; 128 + N when killed by signal N, as sh reports it
  std::string out;
  std::string err;  // the first max_stderr bytes
};

struct ProcessFailure {
  bool timed_out = false;  // killed at the deadline, or at a stop; may well work next time
  std::string reason;      // one line: cannot start, timeout, stopped, too much output
};

// Thread-safety: may be called from several threads at once. Blocks for up to the timeout
// (plus the kill), or until `limits.cancel` is requested.
[[nodiscard]] std::expected<ProcessResult, ProcessFailure> run_process(
    const std::vector<std::string>& argv, const ProcessLimits& limits);

}  // namespace ic::aws
