// What every subcommand's wiring shares: AWS clients built after parsing, and the help that
// names the version.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "app/admin_commands.hpp"
#include "app/aws_stack.hpp"
#include "app/settings.hpp"

namespace ic::app {

// Settings and AWS clients are built only after parsing, so `--help` works with no
// environment at all and a bad setting is reported as one line.
template <class Command>
int with_aws(const SettingsSource& settings, Command command) {
  auto aws_settings = load_aws_settings(settings);
  if (!aws_settings) return report(aws_settings.error());
  AwsStack aws(*aws_settings, settings.as_env());
  return command(aws);
}

// "charge-recovery 0.1.0 (commit 1a2b3c4d5e6f)"
[[nodiscard]] std::string version_line();

// The subcommand's footer (its example) followed by the version line, and a --version flag.
void describe(CLI::App& command, const std::string& footer);

// What the parsed options of list, renotify and reopen are written to; lives as long as the
// CLI::App that refers to it.
struct OperatorCommandState {
  ListOptions list;
  std::string since;
  RenotifyOptions renotify;
  std::string renotify_actor;
  ReopenOptions reopen;
  std::string reopen_actor;
};

// list, renotify and reopen (operator_cli.cpp); each callback sets `exit_code`.
void add_operator_commands(CLI::App& app, SettingsSource& settings, OperatorCommandState& state,
                           int& exit_code);

}  // namespace ic::app
