// Credentials and region from the SDKs' shared files, for the profile AWS_PROFILE names
// ("default" otherwise).
//
//   files: AWS_SHARED_CREDENTIALS_FILE (else $HOME/.aws/credentials), section [<profile>];
//          AWS_CONFIG_FILE (else $HOME/.aws/config), section [profile <profile>] ([default]
//          for the default profile). Keys: aws_access_key_id, aws_secret_access_key,
//          aws_session_token, credential_process, region.
//
// Order (botocore's): keys in the credentials file, then credential_process (credentials file,
// then config file; see credentials_process.hpp), then keys in the config file. Role
// assumption and SSO profiles are not supported: such a profile reports CredentialsNotFound so
// the chain moves on rather than signing with the wrong keys.
#pragma once

#include <optional>
#include <string>

#include "aws/credentials/credentials.hpp"
#include "aws/credentials/process_runner.hpp"
#include "aws/protocol/endpoints.hpp"

namespace ic::aws {

struct SharedConfigLocation {
  std::string credentials_file;  // empty when neither the variable nor HOME is set
  std::string config_file;       // idem
  std::string profile;
};

[[nodiscard]] SharedConfigLocation shared_config_location(const EnvLookup& env);

// Thread-safety: as thread-safe as the lookup. Re-reads both files (and runs the
// credential_process) on every call; the cache (credentials_cache.hpp) keeps the result, so
// edited files are seen after the next refresh.
class ProfileCredentialsProvider final : public CredentialsProvider {
 public:
  explicit ProfileCredentialsProvider(EnvLookup env, ProcessLimits process_limits = {})
      : env_(std::move(env)), process_limits_(process_limits) {}
  [[nodiscard]] std::expected<Credentials, AwsError> credentials() override;

 private:
  EnvLookup env_;
  ProcessLimits process_limits_;
};

// AWS_REGION, then AWS_DEFAULT_REGION (resolve_region), then `region` of the active profile in
// the config file.
[[nodiscard]] std::optional<std::string> resolve_region_with_profile(const EnvLookup& env);

}  // namespace ic::aws
