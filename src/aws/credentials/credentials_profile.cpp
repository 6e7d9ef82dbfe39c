// Shared-file credentials and region.
#include "aws/credentials/credentials_profile.hpp"

#include <fmt/format.h>

#include <array>
#include <span>

#include "aws/credentials/credentials_common.hpp"
#include "aws/credentials/credentials_ini.hpp"
#include "aws/credentials/credentials_process.hpp"

namespace ic::aws {
namespace {

const IniSection* find_section(const std::optional<IniFile>& file, std::string_view name) {
  if (!file) return nullptr;
  const auto it = file->find(name);
  return it == file->end() ? nullptr : &it->second;
}

// The config file prefixes every profile but the default one with "profile ".
const IniSection* config_section(const std::optional<IniFile>& config, const std::string& profile) {
  if (const auto* section = find_section(config, fmt::format("profile {}", profile)))
    return section;
  return profile == "default" ? find_section(config, "default") : nullptr;
}

std::string value_of(const IniSection* section, std::string_view key) {
  if (section == nullptr) return {};
  const auto it = section->find(key);
  return it == section->end() ? std::string{} : it->second;
}

bool has_any(const IniSection* section, std::span<const std::string_view> keys) {
  for (const auto key : keys) {
    if (!value_of(section, key).empty()) return true;
  }
  return false;
}

}  // namespace

SharedConfigLocation shared_config_location(const EnvLookup& env) {
  const auto home = env_value(env, "HOME");
  auto in_home = [&](std::string_view file) {
    return home ? fmt::format("{}/.aws/{}", *home, file) : std::string{};
  };
  return {.credentials_file =
              env_value(env, "AWS_SHARED_CREDENTIALS_FILE").value_or(in_home("credentials")),
          .config_file = env_value(env, "AWS_CONFIG_FILE").value_or(in_home("config")),
          .profile = env_value(env, "AWS_PROFILE").value_or("default")};
}

std::expected<Credentials, AwsError> ProfileCredentialsProvider::credentials() {
  const auto where = shared_config_location(env_);
  const auto credentials_read = read_ini_file(where.credentials_file);
  if (!credentials_read) {
    return std::unexpected(credentials_invalid(fmt::format(
        "profile '{}': the shared credentials file {}", where.profile, credentials_read.error())));
  }
  const auto config_read = read_ini_file(where.config_file);
  if (!config_read) {
    return std::unexpected(credentials_invalid(fmt::format(
        "profile '{}': the shared config file {}", where.profile, config_read.error())));
  }
  const std::optional<IniFile>& credentials_file = *credentials_read;
  const std::optional<IniFile>& config_file = *config_read;
  const IniSection* from_credentials = find_section(credentials_file, where.profile);
  const IniSection* from_config = config_section(config_file, where.profile);

  // botocore's order: keys in the credentials file, then credential_process (credentials
  // file, then config file), then keys in the config file. Keys come as a unit from one
  // section; mixing halves across files would sign with a mismatch.
  static constexpr std::array<std::string_view, 2> kKeys = {"aws_access_key_id",
                                                            "aws_secret_access_key"};
  const IniSection* section = from_credentials;
  if (!has_any(section, kKeys)) {
    for (const IniSection* candidate : {from_credentials, from_config}) {
      if (auto command = value_of(candidate, "credential_process"); !command.empty()) {
        return process_credentials(command, process_limits_);
      }
    }
    section = from_config;
  }
  if (!has_any(section, kKeys)) {
    static constexpr std::array<std::string_view, 3> kUnsupported = {"role_arn", "sso_session",
                                                                     "sso_start_url"};
    const bool unsupported = has_any(from_config, kUnsupported);
    return std::unexpected(credentials_not_found(fmt::format(
        "profile '{}': {}", where.profile,
        unsupported ? "uses role assumption or SSO, which are not supported"
                    : "no aws_access_key_id/aws_secret_access_key or credential_process in the "
                      "shared files")));
  }
  Credentials out{.access_key_id = value_of(section, "aws_access_key_id"),
                  .secret_access_key = value_of(section, "aws_secret_access_key"),
                  .session_token = value_of(section, "aws_session_token")};
  if (out.access_key_id.empty() || out.secret_access_key.empty()) {
    return std::unexpected(credentials_invalid(fmt::format(
        "profile '{}': aws_access_key_id and aws_secret_access_key must be set together",
        where.profile)));
  }
  return out;
}

std::optional<std::string> resolve_region_with_profile(const EnvLookup& env) {
  if (auto region = resolve_region(env)) return region;
  const auto where = shared_config_location(env);
  // An unusable config file holds no region; the credentials provider reports why.
  const auto config_file = read_ini_file(where.config_file).value_or(std::nullopt);
  auto region = value_of(config_section(config_file, where.profile), "region");
  if (region.empty()) return std::nullopt;
  return region;
}

}  // namespace ic::aws
