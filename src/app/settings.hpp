// Configuration (docs/design.md §5): every setting is named by its environment variable and can
// also be given as a --flag; a flag wins over the environment, which wins over the default. A
// missing or malformed setting is one line naming it, and start-up stops.
#pragma once

#include <array>
#include <chrono>
#include <expected>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "aws/protocol/endpoints.hpp"
#include "core/circuit_breaker.hpp"
#include "http/http_transport.hpp"

namespace CLI {
class App;
}

namespace ic::app {

struct SettingSpec {
  std::string_view env;   // e.g. LEASE_SECONDS
  std::string_view flag;  // e.g. --lease-seconds
  std::string_view help;
  std::string_view fallback;  // default, empty when the setting has none
  bool integer = false;       // --help shows INT (also implied by a numeric default)
};

// The endpoint overrides, each checked at start-up. STS is among them: every subcommand signs
// with the same credential chain, and web-identity credentials call STS.
inline constexpr std::array<std::string_view, 4> kAwsEndpointSettings = {
    "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_DYNAMODB",
    "AWS_ENDPOINT_URL_STS"};
// The AWS settings of every subcommand that calls AWS.
inline constexpr std::array<std::string_view, 6> kAwsSettings = {"AWS_REGION",
                                                                 kAwsEndpointSettings[0],
                                                                 kAwsEndpointSettings[1],
                                                                 kAwsEndpointSettings[2],
                                                                 kAwsEndpointSettings[3],
                                                                 "AWS_CA_BUNDLE"};

// Every setting the binary knows, in the order --help lists them.
[[nodiscard]] std::span<const SettingSpec> all_settings();

// One line, naming the setting: "LEASE_SECONDS: must be an integer from 1 to 43200, got 'x'".
struct ConfigError {
  std::string line;
};

// Exit code of a start-up stopped by configuration.
inline constexpr int kConfigErrorExit = 2;

// Prints "configuration error: <line>" to stderr and returns kConfigErrorExit.
[[nodiscard]] int report(const ConfigError& error);

// Flags over the process environment over defaults.
class SettingsSource {
 public:
  explicit SettingsSource(aws::EnvLookup process_env) : process_env_(std::move(process_env)) {}

  // Registers --flag options on `command` for the named settings.
  void add_flags(CLI::App& command, std::span<const std::string_view> env_names);
  void add_flags(CLI::App& command, std::initializer_list<std::string_view> env_names) {
    add_flags(command, std::span(env_names.begin(), env_names.size()));
  }

  [[nodiscard]] std::optional<std::string> lookup(std::string_view env_name) const;
  // The same view as an environment, for the AWS layer (region, endpoints, credentials).
  [[nodiscard]] aws::EnvLookup as_env() const;

  [[nodiscard]] std::expected<std::string, ConfigError> required(std::string_view env) const;
  [[nodiscard]] std::expected<int, ConfigError> integer(std::string_view env, int min,
                                                        int max) const;
  [[nodiscard]] std::expected<std::string, ConfigError> http_url(std::string_view env) const;
  // An optional file setting: "" when unset, else the path once the file could be read.
  [[nodiscard]] std::expected<std::string, ConfigError> readable_file(std::string_view env) const;

 private:
  aws::EnvLookup process_env_;
  std::map<std::string, std::string, std::less<>> flags_;
};

struct AwsSettings {
  std::string region;
  std::string sqs_endpoint;
  std::string dynamodb_endpoint;
  // AWS_CA_BUNDLE: the PEM bundle that verifies every AWS endpoint (SQS, DynamoDB, STS and the
  // container credentials endpoint), as the SDKs read it; empty: the system store.
  std::string ca_bundle;
};

// How we authenticate to core banking and the notification API (`run`, and `renotify`).
struct BankAuthSettings {
  std::string core_banking_token_file;  // empty: no Authorization header
  std::string notification_token_file;  // idem
  http::TlsClientFiles bank_tls;        // both bank APIs; empty fields: libcurl's defaults
};

// Dependency outages (docs/design.md §3 and §5): the circuits and the bank's backpressure.
struct OutageSettings {
  CircuitConfig circuit;  // CIRCUIT_WINDOW, _MIN_CALLS, _FAILURE_PERCENT, _PROBE_MIN/MAX_MS
  Millis ramp{5000};      // CIRCUIT_RAMP_MS
  int bank_max_rps = 0;   // BANK_MAX_RPS, 0: no token bucket
  int bank_concurrency_min = 1;
  int bank_concurrency_max = 32;  // default: WORKERS
  Millis bank_slow_call{2000};
};

// The bank's memory of idempotency keys (docs/design.md §3, "The bank's memory of keys").
struct BankHorizonSettings {
  std::optional<Millis> window = std::chrono::hours(24);  // BANK_IDEMPOTENCY_WINDOW; none: nullopt
  bool status_inquiry = false;                            // BANK_STATUS_INQUIRY
};

struct RunSettings {
  AwsSettings aws;
  std::string queue_url;
  std::string dlq_url;
  std::string table;
  std::chrono::seconds lease{60};
  int workers = 32;
  std::string core_banking_url;
  std::string notification_url;
  std::chrono::seconds retention{30 * 24 * 3600};
  std::string admin_addr;
  std::string log_level;
  std::chrono::seconds shutdown_grace{30};
  std::chrono::seconds probe_interval{15};
  // Well under the lease: a wedged process is restarted before its claims' leases run out.
  std::chrono::seconds loop_stall{15};
  BankAuthSettings bank_auth;
  int receivers = 2;
  OutageSettings outage;
  BankHorizonSettings horizon;
};

// One receiver feeds this many workers: a real SQS receive takes 20-50 ms and returns at most
// 10 messages, so one receiver brings 200-500 messages/s, and 16 workers whose effect (claim,
// debit, notify, complete) takes 80 ms or more use at most 200/s (docs/design.md §5).
inline constexpr int kWorkersPerReceiver = 16;

// LEASE_SECONDS and RETENTION_DAYS, with their bounds, as `run` and the record commands read them.
[[nodiscard]] std::expected<std::chrono::seconds, ConfigError> lease_setting(
    const SettingsSource& s);
[[nodiscard]] std::expected<std::chrono::days, ConfigError> retention_setting(
    const SettingsSource& s);
[[nodiscard]] std::expected<AwsSettings, ConfigError> load_aws_settings(const SettingsSource& s);
[[nodiscard]] std::expected<BankAuthSettings, ConfigError> load_bank_auth(const SettingsSource& s);
[[nodiscard]] std::expected<RunSettings, ConfigError> load_run_settings(const SettingsSource& s);
// The outage settings; BANK_CONCURRENCY_MAX defaults to `workers`.
[[nodiscard]] std::expected<BankHorizonSettings, ConfigError> load_horizon_settings(
    const SettingsSource& s);
[[nodiscard]] std::expected<OutageSettings, ConfigError> load_outage_settings(
    const SettingsSource& s, int workers);

}  // namespace ic::app
