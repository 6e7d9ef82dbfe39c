#include "app/settings.hpp"

#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <array>
#include <charconv>
#include <iostream>

#include "app/time_arg.hpp"
#include "core/small_file.hpp"
#include "http/url.hpp"

namespace ic::app {
namespace {

constexpr std::array<SettingSpec, 37> kSettings = {{
    {"AWS_REGION", "--region", "AWS region (else AWS_DEFAULT_REGION)", ""},
    {"AWS_ENDPOINT_URL", "--endpoint-url", "endpoint for every AWS service (e.g. moto)", ""},
    {"AWS_ENDPOINT_URL_SQS", "--endpoint-url-sqs", "SQS endpoint, over AWS_ENDPOINT_URL", ""},
    {"AWS_ENDPOINT_URL_DYNAMODB", "--endpoint-url-dynamodb",
     "DynamoDB endpoint, over AWS_ENDPOINT_URL", ""},
    {"CHARGE_QUEUE_URL", "--queue-url", "URL of the charge-due source queue", ""},
    {"CHARGE_DLQ_URL", "--dlq-url", "URL of the dead-letter queue", ""},
    {"IDEMPOTENCY_TABLE", "--table", "DynamoDB idempotency table", ""},
    {"LEASE_SECONDS", "--lease-seconds", "claim lease and visibility timeout", "60"},
    {"WORKERS", "--workers", "concurrent message handlers", "32"},
    {"CORE_BANKING_URL", "--core-banking-url", "base URL of the core-banking debit API", ""},
    {"NOTIFICATION_URL", "--notification-url", "base URL of the notification API", ""},
    {"RETENTION_DAYS", "--retention-days", "days an idempotency record is kept (TTL)", "30"},
    {"ADMIN_ADDR", "--admin-addr", "host:port for /health/live, /health/ready, /metrics",
     "127.0.0.1:8080"},
    {"LOG_LEVEL", "--log-level", "debug, info, warn or error", "info"},
    {"SHUTDOWN_GRACE_SECONDS", "--shutdown-grace-seconds",
     "how long SIGTERM waits for in-flight messages", "30"},
    {"PROBE_INTERVAL_SECONDS", "--probe-interval-seconds",
     "how often readiness probes the queues and the table", "15"},
    {"LOOP_STALL_SECONDS", "--loop-stall-seconds",
     "/health/live answers 503 once the event loop has not turned for this long", "15"},
    {"AWS_ENDPOINT_URL_STS", "--endpoint-url-sts",
     "STS endpoint for web-identity credentials, over AWS_ENDPOINT_URL", ""},
    {"CORE_BANKING_TOKEN_FILE", "--core-banking-token-file",
     "file holding the core-banking bearer token (re-read when it changes)", ""},
    {"NOTIFICATION_TOKEN_FILE", "--notification-token-file",
     "file holding the notification API bearer token (re-read when it changes)", ""},
    {"BANK_TLS_CERT_FILE", "--bank-tls-cert-file",
     "PEM client certificate for mutual TLS with both bank APIs", ""},
    {"BANK_TLS_KEY_FILE", "--bank-tls-key-file", "PEM private key of BANK_TLS_CERT_FILE", ""},
    {"BANK_TLS_CA_FILE", "--bank-tls-ca-file",
     "PEM CA bundle that verifies the bank APIs (else the system store)", ""},
    {"AWS_CA_BUNDLE", "--ca-bundle",
     "PEM CA bundle that verifies every AWS endpoint (else the system store)", ""},
    {"RECEIVERS", "--receivers", "concurrent long polls (default: WORKERS / 16, rounded up)", "",
     true},
    {"CIRCUIT_WINDOW", "--circuit-window", "outcomes in each circuit's sliding window", "20"},
    {"CIRCUIT_MIN_CALLS", "--circuit-min-calls",
     "outcomes a window must hold before it can open the circuit", "10"},
    {"CIRCUIT_FAILURE_PERCENT", "--circuit-failure-percent",
     "failure share of the window (%) that opens the circuit", "50"},
    {"CIRCUIT_PROBE_MIN_MS", "--circuit-probe-min-ms",
     "first probe this long after a circuit opens (ms)", "1000"},
    {"CIRCUIT_PROBE_MAX_MS", "--circuit-probe-max-ms",
     "cap of the doubling delay between failed probes (ms)", "15000"},
    {"CIRCUIT_RAMP_MS", "--circuit-ramp-ms",
     "slow start after the debit circuit closes: bank concurrency ramps over this (ms)", "5000"},
    {"BANK_MAX_RPS", "--bank-max-rps", "debit calls per second per process, 0 for no limit", "0"},
    {"BANK_CONCURRENCY_MIN", "--bank-concurrency-min",
     "floor of the adaptive limit of concurrent debits", "1"},
    {"BANK_CONCURRENCY_MAX", "--bank-concurrency-max",
     "ceiling of the adaptive limit of concurrent debits (default: WORKERS)", "", true},
    {"BANK_SLOW_CALL_MS", "--bank-slow-call-ms",
     "a debit slower than this shrinks the concurrency limit (ms)", "2000"},
    {"BANK_IDEMPOTENCY_WINDOW", "--bank-idempotency-window",
     "how long the bank remembers a debit's idempotency key (30s, 30m, 24h, 7d) or none", "24h"},
    {"BANK_STATUS_INQUIRY", "--bank-status-inquiry",
     "true: ask the bank (GET /v1/debits/{key}) before sending a debit again", "false"},
}};

const SettingSpec* spec_of(std::string_view env) {
  for (const SettingSpec& spec : kSettings) {
    if (spec.env == env) return &spec;
  }
  return nullptr;
}

}  // namespace

std::span<const SettingSpec> all_settings() {
  return kSettings;
}

int report(const ConfigError& error) {
  std::cerr << "configuration error: " << error.line << "\n";
  return kConfigErrorExit;
}

void SettingsSource::add_flags(CLI::App& command, std::span<const std::string_view> env_names) {
  for (std::string_view env : env_names) {
    const SettingSpec* spec = spec_of(env);
    if (spec == nullptr) throw std::logic_error("unknown setting " + std::string(env));
    std::string help =
        fmt::format("{} [env {}{}]", spec->help, spec->env,
                    spec->fallback.empty() ? "" : fmt::format(", default {}", spec->fallback));
    auto* option = command.add_option_function<std::string>(
        std::string(spec->flag),
        [this, key = std::string(spec->env)](const std::string& value) { flags_[key] = value; },
        help);
    // The integer settings are the ones marked so or with a numeric default: --help names them
    // INT.
    if (spec->integer ||
        (!spec->fallback.empty() &&
         std::ranges::all_of(spec->fallback, [](char c) { return c >= '0' && c <= '9'; }))) {
      option->type_name("INT");
    }
  }
}

std::optional<std::string> SettingsSource::lookup(std::string_view env_name) const {
  if (auto it = flags_.find(env_name); it != flags_.end()) return it->second;
  if (auto value = process_env_(env_name); value && !value->empty()) return value;
  if (const SettingSpec* spec = spec_of(env_name); spec && !spec->fallback.empty()) {
    return std::string(spec->fallback);
  }
  return std::nullopt;
}

aws::EnvLookup SettingsSource::as_env() const {
  return [this](std::string_view name) { return lookup(name); };
}

std::expected<std::string, ConfigError> SettingsSource::required(std::string_view env) const {
  auto value = lookup(env);
  if (!value) {
    const SettingSpec* spec = spec_of(env);
    return std::unexpected(ConfigError{
        fmt::format("{}: required but not set (set the environment variable or pass {})", env,
                    spec ? spec->flag : "its flag")});
  }
  return *value;
}

std::expected<int, ConfigError> SettingsSource::integer(std::string_view env, int min,
                                                        int max) const {
  auto text = required(env);
  if (!text) return std::unexpected(text.error());
  int value = 0;
  const auto [end, ec] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (ec != std::errc{} || end != text->data() + text->size() || value < min || value > max) {
    return std::unexpected(ConfigError{
        fmt::format("{}: must be an integer from {} to {}, got '{}'", env, min, max, *text)});
  }
  return value;
}

std::expected<std::string, ConfigError> SettingsSource::http_url(std::string_view env) const {
  auto text = required(env);
  if (!text) return std::unexpected(text.error());
  if (auto url = http::parse_http_url(*text); !url) {
    return std::unexpected(ConfigError{fmt::format("{}: {}, got '{}'", env, url.error(), *text)});
  }
  while (text->ends_with('/')) text->pop_back();
  return *text;
}

std::expected<std::string, ConfigError> SettingsSource::readable_file(std::string_view env) const {
  auto path = lookup(env);
  if (!path) return std::string{};
  // Files named here hold keys and tokens: a megabyte is far more than any of them needs.
  if (auto content = read_small_file(*path, 1024 * 1024); !content) {
    return std::unexpected(ConfigError{fmt::format("{}: {} ({})", env, content.error(), *path)});
  }
  return *path;
}

std::expected<AwsSettings, ConfigError> load_aws_settings(const SettingsSource& s) {
  const aws::EnvLookup env = s.as_env();
  auto region = aws::resolve_region(env);
  if (!region) {
    return std::unexpected(
        ConfigError{"AWS_REGION: required but not set (or set AWS_DEFAULT_REGION, or --region)"});
  }
  // An endpoint is signed into every request; a malformed one must stop start-up here, not
  // fail each call (or, before, throw from the signer on a background thread).
  for (const std::string_view endpoint : kAwsEndpointSettings) {
    if (s.lookup(endpoint)) {
      auto url = s.http_url(endpoint);
      if (!url) return std::unexpected(url.error());
    }
  }
  auto ca_bundle = s.readable_file("AWS_CA_BUNDLE");
  if (!ca_bundle) return std::unexpected(ca_bundle.error());
  return AwsSettings{*region, aws::resolve_endpoint("sqs", *region, env),
                     aws::resolve_endpoint("dynamodb", *region, env), *ca_bundle};
}

std::expected<BankAuthSettings, ConfigError> load_bank_auth(const SettingsSource& s) {
  BankAuthSettings out;
  for (auto [env, target] : {std::pair{"CORE_BANKING_TOKEN_FILE", &out.core_banking_token_file},
                             std::pair{"NOTIFICATION_TOKEN_FILE", &out.notification_token_file},
                             std::pair{"BANK_TLS_CERT_FILE", &out.bank_tls.cert_file},
                             std::pair{"BANK_TLS_KEY_FILE", &out.bank_tls.key_file},
                             std::pair{"BANK_TLS_CA_FILE", &out.bank_tls.ca_file}}) {
    auto file = s.readable_file(env);
    if (!file) return std::unexpected(file.error());
    *target = *file;
  }
  if (out.bank_tls.cert_file.empty() != out.bank_tls.key_file.empty()) {
    return std::unexpected(ConfigError{
        "BANK_TLS_KEY_FILE: BANK_TLS_CERT_FILE and BANK_TLS_KEY_FILE must be set together"});
  }
  return out;
}

std::expected<std::chrono::seconds, ConfigError> lease_setting(const SettingsSource& s) {
  auto lease = s.integer("LEASE_SECONDS", 1, 43'200);  // SQS's visibility timeout limit
  if (!lease) return std::unexpected(lease.error());
  return std::chrono::seconds(*lease);
}

std::expected<std::chrono::days, ConfigError> retention_setting(const SettingsSource& s) {
  auto retention = s.integer("RETENTION_DAYS", 15, 3650);  // must outlive SQS's 14 days
  if (!retention) return std::unexpected(retention.error());
  return std::chrono::days(*retention);
}

std::expected<RunSettings, ConfigError> load_run_settings(const SettingsSource& s) {
  RunSettings out;
  // Checked in a fixed order so the first problem reported is deterministic.
  auto aws_settings = load_aws_settings(s);
  if (!aws_settings) return std::unexpected(aws_settings.error());
  out.aws = *aws_settings;
  for (auto [env, target] :
       {std::pair{"CHARGE_QUEUE_URL", &out.queue_url}, std::pair{"CHARGE_DLQ_URL", &out.dlq_url},
        std::pair{"CORE_BANKING_URL", &out.core_banking_url},
        std::pair{"NOTIFICATION_URL", &out.notification_url}}) {
    auto url = s.http_url(env);
    if (!url) return std::unexpected(url.error());
    *target = *url;
  }
  auto table = s.required("IDEMPOTENCY_TABLE");
  if (!table) return std::unexpected(table.error());
  out.table = *table;
  auto lease = lease_setting(s);
  if (!lease) return std::unexpected(lease.error());
  out.lease = *lease;
  auto workers = s.integer("WORKERS", 1, 1024);
  if (!workers) return std::unexpected(workers.error());
  out.workers = *workers;
  auto retention = retention_setting(s);
  if (!retention) return std::unexpected(retention.error());
  out.retention = *retention;
  auto admin = s.required("ADMIN_ADDR");
  if (!admin) return std::unexpected(admin.error());
  out.admin_addr = *admin;
  auto level = s.required("LOG_LEVEL");
  if (!level) return std::unexpected(level.error());
  out.log_level = *level;
  auto grace = s.integer("SHUTDOWN_GRACE_SECONDS", 0, 3600);
  if (!grace) return std::unexpected(grace.error());
  out.shutdown_grace = std::chrono::seconds(*grace);
  auto probe_interval = s.integer("PROBE_INTERVAL_SECONDS", 1, 3600);
  if (!probe_interval) return std::unexpected(probe_interval.error());
  out.probe_interval = std::chrono::seconds(*probe_interval);
  auto loop_stall = s.integer("LOOP_STALL_SECONDS", 1, 3600);
  if (!loop_stall) return std::unexpected(loop_stall.error());
  out.loop_stall = std::chrono::seconds(*loop_stall);
  auto bank_auth = load_bank_auth(s);
  if (!bank_auth) return std::unexpected(bank_auth.error());
  out.bank_auth = *bank_auth;
  out.receivers = (out.workers + kWorkersPerReceiver - 1) / kWorkersPerReceiver;
  if (s.lookup("RECEIVERS")) {
    auto receivers = s.integer("RECEIVERS", 1, 64);
    if (!receivers) return std::unexpected(receivers.error());
    out.receivers = *receivers;
  }
  auto outage = load_outage_settings(s, out.workers);
  if (!outage) return std::unexpected(outage.error());
  out.outage = *outage;
  auto horizon = load_horizon_settings(s);
  if (!horizon) return std::unexpected(horizon.error());
  out.horizon = *horizon;
  return out;
}

std::expected<BankHorizonSettings, ConfigError> load_horizon_settings(const SettingsSource& s) {
  BankHorizonSettings out;
  const std::string window = s.lookup("BANK_IDEMPOTENCY_WINDOW").value_or("24h");
  if (window == "none") {
    out.window.reset();
  } else {
    auto parsed = parse_duration(window);
    if (!parsed || *parsed < std::chrono::seconds(1) || *parsed > std::chrono::days(3650)) {
      return std::unexpected(ConfigError{fmt::format(
          "BANK_IDEMPOTENCY_WINDOW: must be a duration from 1s to 3650d (30s, 30m, 24h, 7d) or "
          "none, got '{}'",
          window)});
    }
    out.window = *parsed;
  }
  const std::string inquiry = s.lookup("BANK_STATUS_INQUIRY").value_or("false");
  if (inquiry != "true" && inquiry != "false") {
    return std::unexpected(
        ConfigError{fmt::format("BANK_STATUS_INQUIRY: must be true or false, got '{}'", inquiry)});
  }
  out.status_inquiry = inquiry == "true";
  return out;
}

std::expected<OutageSettings, ConfigError> load_outage_settings(const SettingsSource& s,
                                                                int workers) {
  OutageSettings out;
  const auto read = [&s](std::string_view env, int min, int max,
                         int& target) -> std::expected<void, ConfigError> {
    auto value = s.integer(env, min, max);
    if (!value) return std::unexpected(value.error());
    target = *value;
    return {};
  };
  const auto read_ms = [&read](std::string_view env, int min, int max,
                               Millis& target) -> std::expected<void, ConfigError> {
    int value = 0;
    if (auto ok = read(env, min, max, value); !ok) return ok;
    target = Millis{value};
    return {};
  };
  // Checked in order; each bound that depends on another setting names it.
  if (auto ok = read("CIRCUIT_WINDOW", 1, 1000, out.circuit.window); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = read("CIRCUIT_MIN_CALLS", 1, out.circuit.window, out.circuit.min_calls); !ok) {
    return std::unexpected(ConfigError{ok.error().line + " (at most CIRCUIT_WINDOW)"});
  }
  if (auto ok = read("CIRCUIT_FAILURE_PERCENT", 1, 100, out.circuit.failure_percent); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = read_ms("CIRCUIT_PROBE_MIN_MS", 10, 600'000, out.circuit.probe_min); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = read_ms("CIRCUIT_PROBE_MAX_MS", static_cast<int>(out.circuit.probe_min.count()),
                        3'600'000, out.circuit.probe_max);
      !ok) {
    return std::unexpected(ConfigError{ok.error().line + " (at least CIRCUIT_PROBE_MIN_MS)"});
  }
  if (auto ok = read_ms("CIRCUIT_RAMP_MS", 0, 600'000, out.ramp); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = read("BANK_MAX_RPS", 0, 100'000, out.bank_max_rps); !ok) {
    return std::unexpected(ok.error());
  }
  if (auto ok = read("BANK_CONCURRENCY_MIN", 1, 1024, out.bank_concurrency_min); !ok) {
    return std::unexpected(ok.error());
  }
  out.bank_concurrency_max = std::max(workers, out.bank_concurrency_min);
  if (s.lookup("BANK_CONCURRENCY_MAX")) {
    if (auto ok =
            read("BANK_CONCURRENCY_MAX", out.bank_concurrency_min, 1024, out.bank_concurrency_max);
        !ok) {
      return std::unexpected(ConfigError{ok.error().line + " (at least BANK_CONCURRENCY_MIN)"});
    }
  }
  if (auto ok = read_ms("BANK_SLOW_CALL_MS", 1, 600'000, out.bank_slow_call); !ok) {
    return std::unexpected(ok.error());
  }
  return out;
}

}  // namespace ic::app
