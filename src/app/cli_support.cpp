#include "app/cli_support.hpp"

#include <fmt/format.h>

#include "app/build_info.hpp"
#include "app/system_adapters.hpp"
#include "app/time_arg.hpp"

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
  auto retention = retention_setting(settings);
  if (!retention) return std::unexpected(report(retention.error()));
  return TableSettings{*table, *retention};
}

std::expected<std::optional<Instant>, int> time_flag(std::string_view flag,
                                                     const std::string& text) {
  if (text.empty()) return std::nullopt;
  auto at = parse_since(text, real_clock().now());
  if (!at) return std::unexpected(report({fmt::format("{}: {}", flag, at.error())}));
  return *at;
}

std::string actor_or_default(const std::string& given, const SettingsSource& settings) {
  return given.empty() ? operator_identity(settings.as_env()("USER").value_or("")) : given;
}

}  // namespace ic::app
