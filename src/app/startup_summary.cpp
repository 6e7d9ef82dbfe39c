#include "app/startup_summary.hpp"

namespace ic::app {

std::string mask_url_user_info(std::string value) {
  const auto scheme = value.find("://");
  if (scheme == std::string::npos) return value;
  const auto authority = scheme + 3;
  const auto end = value.find_first_of("/?#", authority);
  const auto at = value.rfind('@', end == std::string::npos ? std::string::npos : end);
  if (at == std::string::npos || at < authority) return value;
  return value.replace(authority, at - authority, "***");
}

std::string non_default_settings(const SettingsSource& settings) {
  std::string out;
  for (const SettingSpec& spec : all_settings()) {
    const auto value = settings.lookup(spec.env);
    if (!value || *value == spec.fallback) continue;
    if (!out.empty()) out += ' ';
    out.append(spec.env).append("=").append(mask_url_user_info(*value));
  }
  return out;
}

}  // namespace ic::app
