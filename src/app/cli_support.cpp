#include "app/cli_support.hpp"

#include <fmt/format.h>

#include "app/build_info.hpp"
#include "app/system_adapters.hpp"

namespace ic::app {

std::string version_line() {
  return fmt::format("charge-recovery {} (commit {})", kVersion, kCommit);
}

void describe(CLI::App& command, const std::string& footer) {
  command.footer(footer + "\n\n" + version_line());
  command.set_version_flag("--version", version_line());
}

std::expected<TableSettings, int> table_and_retention(const SettingsSource& settings) {
  auto table = settings.required("IDEMPOTENCY_TABLE");
  if (!table) return std::unexpected(report(table.error()));
  auto retention = settings.integer("RETENTION_DAYS", 15, 3650);
  if (!retention) return std::unexpected(report(retention.error()));
  return TableSettings{*table, std::chrono::seconds(std::chrono::days(*retention))};
}

std::string actor_or_default(const std::string& given, const SettingsSource& settings) {
  return given.empty() ? operator_identity(settings.as_env()("USER").value_or("")) : given;
}

}  // namespace ic::app
