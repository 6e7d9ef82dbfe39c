// What the subcommands' wiring shares: AWS clients built after parsing, the help that names the
// version, the record commands' common settings, and one add_<name> per subcommand.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <expected>
#include <optional>
#include <string>
#include <string_view>

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

// IDEMPOTENCY_TABLE and RETENTION_DAYS, as the record commands (list, renotify, reopen) read
// them; the error is the exit code, the line already reported.
struct TableSettings {
  std::string table;
  std::chrono::seconds retention;
};
[[nodiscard]] std::expected<TableSettings, int> table_and_retention(const SettingsSource& settings);

// A `--since`/`--until` argument (time_arg.hpp's forms); empty text is no bound. The error is
// the exit code, the line (naming `flag`) already reported.
[[nodiscard]] std::expected<std::optional<Instant>, int> time_flag(std::string_view flag,
                                                                   const std::string& text);

// --actor, else $USER@host.
[[nodiscard]] std::string actor_or_default(const std::string& given,
                                           const SettingsSource& settings);

// Each adds its subcommand to `app` (src/app/commands/<name>.cpp); the subcommand's callback
// sets `exit_code`. `settings` and `exit_code` must outlive the parse.
void add_run(CLI::App& app, SettingsSource& settings, int& exit_code);
void add_provision(CLI::App& app, SettingsSource& settings, int& exit_code);
void add_send(CLI::App& app, SettingsSource& settings, int& exit_code);
void add_status(CLI::App& app, SettingsSource& settings, int& exit_code);
void add_redrive(CLI::App& app, SettingsSource& settings, int& exit_code);
void add_list(CLI::App& app, SettingsSource& settings, int& exit_code);
void add_renotify(CLI::App& app, SettingsSource& settings, int& exit_code);
void add_reopen(CLI::App& app, SettingsSource& settings, int& exit_code);
void add_reconcile(CLI::App& app, SettingsSource& settings, int& exit_code);

}  // namespace ic::app
