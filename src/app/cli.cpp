#include "app/cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <functional>
#include <iostream>
#include <string>
#include <utility>
#include <vector>

#include "app/cli_support.hpp"

namespace ic::app {

int run_cli(int argc, char** argv, const aws::EnvLookup& env) {
  CLI::App app{
      "charge-recovery: exactly-once recorded debits of FinEdge service charges from an SQS "
      "queue, protected by conditional writes to a DynamoDB idempotency table."};
  app.require_subcommand(1);
  app.set_version_flag("--version", version_line());
  app.footer(version_line());
  SettingsSource settings(env);
  int exit_code = 0;
  for (const auto add : {add_run, add_provision, add_send, add_status, add_redrive, add_list,
                         add_renotify, add_reopen, add_reconcile}) {
    add(app, settings, exit_code);
  }

  // CLI11 reads an unknown first word as a stray positional and reports only that a subcommand
  // is required: name the word and the choices instead.
  if (argc > 1 && argv[1][0] != '-') {
    const std::function<bool(const CLI::App*)> every;
    std::vector<std::string> names;
    for (const CLI::App* sub : std::as_const(app).get_subcommands(every)) {
      names.push_back(sub->get_name());
    }
    if (std::ranges::find(names, std::string_view(argv[1])) == names.end()) {
      std::cerr << fmt::format(
          "usage error: unknown subcommand '{}'; choose one of: {} (see --help)\n", argv[1],
          fmt::join(names, ", "));
      return kConfigErrorExit;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    // One line and exit 2, like a configuration error (CLI11's own codes are 100+).
    std::string line = e.what();
    std::ranges::replace(line, '\n', ' ');
    std::cerr << fmt::format("usage error: {} (see --help)\n", line);
    return kConfigErrorExit;
  }
  return exit_code;
}

}  // namespace ic::app
