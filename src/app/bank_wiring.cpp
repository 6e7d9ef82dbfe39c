#include "app/bank_wiring.hpp"

#include <fmt/format.h>

namespace ic::app {

std::expected<std::unique_ptr<bank::BearerTokenFile>, ConfigError> open_token_file(
    std::string_view setting, const std::string& path) {
  if (path.empty()) return nullptr;
  auto token = std::make_unique<bank::BearerTokenFile>(path);
  if (auto checked = token->current(); !checked) {
    return std::unexpected(ConfigError{fmt::format("{}: {}", setting, checked.error())});
  }
  return token;
}

}  // namespace ic::app
