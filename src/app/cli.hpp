// The charge-recovery command line: run | provision | send | status | redrive | list |
// renotify | reopen | reconcile, one add_<name> per subcommand (src/app/commands).
#pragma once

#include "aws/protocol/endpoints.hpp"

namespace ic::app {

// Parses the command line, reads settings through `env` (flags win) and runs the subcommand.
// Returns the process exit code.
[[nodiscard]] int run_cli(int argc, char** argv, const aws::EnvLookup& env);

}  // namespace ic::app
