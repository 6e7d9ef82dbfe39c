// Configuration: flags over environment over defaults; one clear line naming a bad setting.
#include "app/settings.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <map>

namespace ic::app {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

class SettingsTest : public ::testing::Test {
 protected:
  std::map<std::string, std::string, std::less<>> env = {
      {"AWS_REGION", "ap-south-1"},
      {"CHARGE_QUEUE_URL", "https://sqs.ap-south-1.amazonaws.com/1/charge-due"},
      {"CHARGE_DLQ_URL", "https://sqs.ap-south-1.amazonaws.com/1/charge-due-dlq"},
      {"IDEMPOTENCY_TABLE", "charge-idempotency"},
      {"CORE_BANKING_URL", "https://core.bank.internal/"},
      {"NOTIFICATION_URL", "http://notify.internal:8080"}};

  std::expected<RunSettings, ConfigError> load(std::vector<std::string> flags = {}) {
    source_ = std::make_unique<SettingsSource>([this](std::string_view name) {
      auto it = env.find(name);
      return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
    CLI::App app;
    source_->add_flags(app, {"AWS_REGION", "LEASE_SECONDS", "WORKERS", "IDEMPOTENCY_TABLE"});
    std::vector<std::string> args(flags.rbegin(), flags.rend());
    app.parse(args);
    return load_run_settings(*source_);
  }

  std::unique_ptr<SettingsSource> source_;
};

TEST_F(SettingsTest, DefaultsApplyWhenOnlyRequiredSettingsAreGiven) {
  auto s = load();
  ASSERT_TRUE(s) << s.error().line;
  EXPECT_EQ(s->lease, std::chrono::seconds(60));
  EXPECT_EQ(s->workers, 32);
  EXPECT_EQ(s->retention, std::chrono::days(30));
  EXPECT_EQ(s->admin_addr, "127.0.0.1:8080");
  EXPECT_EQ(s->log_level, "info");
  EXPECT_EQ(s->core_banking_url, "https://core.bank.internal") << "trailing slash dropped";
  EXPECT_EQ(s->aws.dynamodb_endpoint, "https://dynamodb.ap-south-1.amazonaws.com");
  EXPECT_EQ(s->aws.sqs_endpoint, "https://sqs.ap-south-1.amazonaws.com");
}

TEST_F(SettingsTest, FlagsWinOverTheEnvironment) {
  env["LEASE_SECONDS"] = "90";
  auto s = load({"--lease-seconds", "120", "--table", "other"});
  ASSERT_TRUE(s) << s.error().line;
  EXPECT_EQ(s->lease, std::chrono::seconds(120));
  EXPECT_EQ(s->table, "other");
}

TEST_F(SettingsTest, EndpointOverridesFollowTheSdkPrecedence) {
  env["AWS_ENDPOINT_URL"] = "http://127.0.0.1:5000";
  env["AWS_ENDPOINT_URL_SQS"] = "http://127.0.0.1:9324/";
  auto s = load();
  ASSERT_TRUE(s) << s.error().line;
  EXPECT_EQ(s->aws.sqs_endpoint, "http://127.0.0.1:9324");
  EXPECT_EQ(s->aws.dynamodb_endpoint, "http://127.0.0.1:5000");
}

TEST_F(SettingsTest, EachMissingRequiredSettingIsNamed) {
  for (const char* name : {"CHARGE_QUEUE_URL", "CHARGE_DLQ_URL", "IDEMPOTENCY_TABLE",
                           "CORE_BANKING_URL", "NOTIFICATION_URL"}) {
    auto saved = env.extract(name);
    auto s = load();
    ASSERT_FALSE(s) << name;
    EXPECT_THAT(s.error().line, StartsWith(std::string(name) + ": required"));
    env.insert(std::move(saved));
  }
}

TEST_F(SettingsTest, MissingRegionIsNamed) {
  env.erase("AWS_REGION");
  auto s = load();
  ASSERT_FALSE(s);
  EXPECT_THAT(s.error().line, StartsWith("AWS_REGION"));
}

TEST_F(SettingsTest, MalformedNumbersAreRefusedWithTheValue) {
  env["WORKERS"] = "12abc";
  auto s = load();
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().line, "WORKERS: must be an integer from 1 to 1024, got '12abc'");
}

TEST_F(SettingsTest, OutOfRangeValuesAreRefused) {
  EXPECT_THAT(load({"--lease-seconds", "0"}).error().line, StartsWith("LEASE_SECONDS"));
  EXPECT_THAT(load({"--lease-seconds", "43201"}).error().line, StartsWith("LEASE_SECONDS"));
  env["RETENTION_DAYS"] = "14";
  EXPECT_THAT(load().error().line, HasSubstr("RETENTION_DAYS: must be an integer from 15"))
      << "records must outlive SQS's 14-day retention";
}

TEST_F(SettingsTest, UrlsMustBeHttpWithAHost) {
  for (const char* bad : {"core.bank.internal", "ftp://x", "http://", "http://a b"}) {
    env["CORE_BANKING_URL"] = bad;
    auto s = load();
    ASSERT_FALSE(s) << bad;
    EXPECT_THAT(s.error().line, StartsWith("CORE_BANKING_URL: must be an http:// or https://"));
  }
}

// Issue 10, defect 2: "not a url" used to pass start-up and throw from the signer on a
// background thread (std::terminate after "consumer started").
TEST_F(SettingsTest, EveryEndpointSettingIsValidatedEvenOneAnOverrideHides) {
  for (const char* name :
       {"AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_SQS", "AWS_ENDPOINT_URL_DYNAMODB"}) {
    for (const char* bad : {"not a url", "http://", "localhost:4566", "http://host:99999",
                            "http://host:port", "http://ho\tst"}) {
      auto env_before = env;
      env["AWS_ENDPOINT_URL_SQS"] = "http://127.0.0.1:9324";  // hides AWS_ENDPOINT_URL for SQS
      env[name] = bad;
      auto s = load();
      ASSERT_FALSE(s) << name << "=" << bad;
      EXPECT_THAT(s.error().line,
                  StartsWith(std::string(name) + ": must be an http:// or https:// URL"));
      env = env_before;
    }
  }
}

TEST_F(SettingsTest, QueueUrlsAreValidatedLikeTheOthers) {
  env["CHARGE_DLQ_URL"] = "not a url";
  EXPECT_THAT(load().error().line, StartsWith("CHARGE_DLQ_URL: must be an http:// or https://"));
}

TEST_F(SettingsTest, TheProbeIntervalDefaultsTo15SecondsWithinOneToAnHour) {
  auto s = load();
  ASSERT_TRUE(s) << s.error().line;
  EXPECT_EQ(s->probe_interval, std::chrono::seconds(15));
  env["PROBE_INTERVAL_SECONDS"] = "2";
  EXPECT_EQ(load()->probe_interval, std::chrono::seconds(2));
  env["PROBE_INTERVAL_SECONDS"] = "0";
  EXPECT_THAT(load().error().line,
              StartsWith("PROBE_INTERVAL_SECONDS: must be an integer from 1 to 3600"));
}

TEST_F(SettingsTest, LoopStallDefaultsWellUnderTheLease) {
  auto s = load();
  ASSERT_TRUE(s) << s.error().line;
  EXPECT_EQ(s->loop_stall, std::chrono::seconds(15));
  EXPECT_LT(s->loop_stall, s->lease);
  env["LOOP_STALL_SECONDS"] = "3";
  EXPECT_EQ(load()->loop_stall, std::chrono::seconds(3));
  env["LOOP_STALL_SECONDS"] = "0";
  EXPECT_THAT(load().error().line,
              StartsWith("LOOP_STALL_SECONDS: must be an integer from 1 to 3600"));
}

TEST_F(SettingsTest, ReceiversDefaultToOnePerSixteenWorkersRoundedUp) {
  for (const auto& [workers, receivers] :
       {std::pair{"1", 1}, std::pair{"16", 1}, std::pair{"17", 2}, std::pair{"32", 2},
        std::pair{"1024", 64}}) {
    env["WORKERS"] = workers;
    auto s = load();
    ASSERT_TRUE(s) << s.error().line;
    EXPECT_EQ(s->receivers, receivers) << workers << " workers";
  }
}

TEST_F(SettingsTest, ReceiversCanBeSetAndAreRangeChecked) {
  env["RECEIVERS"] = "5";
  auto s = load();
  ASSERT_TRUE(s) << s.error().line;
  EXPECT_EQ(s->receivers, 5);
  env["RECEIVERS"] = "0";
  EXPECT_EQ(load().error().line, "RECEIVERS: must be an integer from 1 to 64, got '0'");
}

TEST_F(SettingsTest, EmptyEnvironmentValuesCountAsUnset) {
  env["IDEMPOTENCY_TABLE"] = "";
  EXPECT_THAT(load().error().line, StartsWith("IDEMPOTENCY_TABLE: required"));
}

// The bank authentication files (docs/design.md §5): optional, but a named file must be
// readable, and a certificate needs its key.
TEST_F(SettingsTest, BankAuthFilesAreOptionalAndCheckedWhenGiven) {
  auto none = load();
  ASSERT_TRUE(none) << none.error().line;
  EXPECT_EQ(none->bank_auth.core_banking_token_file, "");
  EXPECT_EQ(none->bank_auth.bank_tls.cert_file, "");

  const std::string readable = IC_SOURCE_DIR "/README.md";
  for (const auto* name : {"CORE_BANKING_TOKEN_FILE", "NOTIFICATION_TOKEN_FILE",
                           "BANK_TLS_CERT_FILE", "BANK_TLS_KEY_FILE", "BANK_TLS_CA_FILE"}) {
    env[name] = readable;
  }
  auto all = load();
  ASSERT_TRUE(all) << all.error().line;
  EXPECT_EQ(all->bank_auth.notification_token_file, readable);
  EXPECT_EQ(all->bank_auth.bank_tls.key_file, readable);
  EXPECT_EQ(all->bank_auth.bank_tls.ca_file, readable);

  env["BANK_TLS_CA_FILE"] = "/nonexistent/ca.pem";
  auto unreadable = load();
  ASSERT_FALSE(unreadable);
  EXPECT_THAT(unreadable.error().line, StartsWith("BANK_TLS_CA_FILE: cannot be read"));
  EXPECT_THAT(unreadable.error().line, HasSubstr("/nonexistent/ca.pem"));

  env.erase("BANK_TLS_CA_FILE");
  env.erase("BANK_TLS_KEY_FILE");
  auto half = load();
  ASSERT_FALSE(half);
  EXPECT_THAT(half.error().line, StartsWith("BANK_TLS_KEY_FILE: "));
}

// AWS_CA_BUNDLE (docs/design.md §5): optional; a named bundle must be readable.
TEST_F(SettingsTest, AwsCaBundleIsOptionalAndMustBeReadableWhenGiven) {
  auto none = load();
  ASSERT_TRUE(none) << none.error().line;
  EXPECT_EQ(none->aws.ca_bundle, "");

  const std::string readable = IC_SOURCE_DIR "/README.md";
  env["AWS_CA_BUNDLE"] = readable;
  auto given = load();
  ASSERT_TRUE(given) << given.error().line;
  EXPECT_EQ(given->aws.ca_bundle, readable);

  env["AWS_CA_BUNDLE"] = "/nonexistent/aws-ca.pem";
  auto missing = load();
  ASSERT_FALSE(missing);
  EXPECT_THAT(missing.error().line, StartsWith("AWS_CA_BUNDLE: cannot be read"));
  EXPECT_THAT(missing.error().line, HasSubstr("/nonexistent/aws-ca.pem"));
  EXPECT_EQ(missing.error().line.find('\n'), std::string::npos);

  env["AWS_CA_BUNDLE"] = IC_SOURCE_DIR;  // a directory is not a bundle
  EXPECT_THAT(load().error().line, StartsWith("AWS_CA_BUNDLE: "));
}

TEST_F(SettingsTest, AwsCaBundleIsAFlagOfEverySubcommandThatCallsAws) {
  EXPECT_NE(std::ranges::find(kAwsSettings, "AWS_CA_BUNDLE"), kAwsSettings.end());
  env["AWS_CA_BUNDLE"] = "/nonexistent/env.pem";
  source_ = std::make_unique<SettingsSource>([this](std::string_view name) {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
  CLI::App app;
  source_->add_flags(app, kAwsSettings);
  const std::string readable = IC_SOURCE_DIR "/README.md";
  std::vector<std::string> args{readable, "--ca-bundle"};
  app.parse(args);
  auto aws = load_aws_settings(*source_);
  ASSERT_TRUE(aws) << aws.error().line;
  EXPECT_EQ(aws->ca_bundle, readable);
}

}  // namespace
}  // namespace ic::app

namespace ic::app {
namespace {

// The outage settings (docs/design.md §5, issue 22): defaults, flags and one-line errors.
class OutageSettingsTest : public ::testing::Test {
 protected:
  std::map<std::string, std::string, std::less<>> env;

  std::expected<OutageSettings, ConfigError> load(std::vector<std::string> flags = {},
                                                  int workers = 8) {
    source_ = std::make_unique<SettingsSource>([this](std::string_view name) {
      auto it = env.find(name);
      return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
    CLI::App app;
    source_->add_flags(app, {"CIRCUIT_WINDOW", "CIRCUIT_PROBE_MAX_MS", "BANK_MAX_RPS"});
    std::vector<std::string> args(flags.rbegin(), flags.rend());
    app.parse(args);
    return load_outage_settings(*source_, workers);
  }

  std::unique_ptr<SettingsSource> source_;
};

TEST_F(OutageSettingsTest, DefaultsAreTheContractsAndTheCeilingIsTheWorkers) {
  auto s = load({}, 12);
  ASSERT_TRUE(s) << s.error().line;
  EXPECT_EQ(s->circuit.window, 20);
  EXPECT_EQ(s->circuit.min_calls, 10);
  EXPECT_EQ(s->circuit.failure_percent, 50);
  EXPECT_EQ(s->circuit.probe_min, Millis{1000});
  EXPECT_EQ(s->circuit.probe_max, Millis{15000});
  EXPECT_EQ(s->ramp, Millis{5000});
  EXPECT_EQ(s->bank_max_rps, 0);
  EXPECT_EQ(s->bank_concurrency_min, 1);
  EXPECT_EQ(s->bank_concurrency_max, 12);
  EXPECT_EQ(s->bank_slow_call, Millis{2000});
}

TEST_F(OutageSettingsTest, EnvironmentAndFlagsSetThem) {
  env = {{"CIRCUIT_WINDOW", "40"},          {"CIRCUIT_MIN_CALLS", "5"},
         {"CIRCUIT_FAILURE_PERCENT", "80"}, {"CIRCUIT_PROBE_MIN_MS", "500"},
         {"CIRCUIT_RAMP_MS", "0"},          {"BANK_CONCURRENCY_MIN", "2"},
         {"BANK_CONCURRENCY_MAX", "6"},     {"BANK_SLOW_CALL_MS", "750"}};
  auto s = load({"--circuit-probe-max-ms", "4000", "--bank-max-rps", "25"});
  ASSERT_TRUE(s) << s.error().line;
  EXPECT_EQ(s->circuit.window, 40);
  EXPECT_EQ(s->circuit.min_calls, 5);
  EXPECT_EQ(s->circuit.failure_percent, 80);
  EXPECT_EQ(s->circuit.probe_min, Millis{500});
  EXPECT_EQ(s->circuit.probe_max, Millis{4000});
  EXPECT_EQ(s->ramp, Millis{0});
  EXPECT_EQ(s->bank_max_rps, 25);
  EXPECT_EQ(s->bank_concurrency_min, 2);
  EXPECT_EQ(s->bank_concurrency_max, 6);
  EXPECT_EQ(s->bank_slow_call, Millis{750});
}

TEST_F(OutageSettingsTest, EachBadValueIsOneLineNamingIt) {
  const std::vector<std::pair<std::string, std::string>> bad = {{"CIRCUIT_WINDOW", "0"},
                                                                {"CIRCUIT_WINDOW", "x"},
                                                                {"CIRCUIT_FAILURE_PERCENT", "101"},
                                                                {"CIRCUIT_PROBE_MIN_MS", "-1"},
                                                                {"CIRCUIT_RAMP_MS", "1.5"},
                                                                {"BANK_MAX_RPS", "-3"},
                                                                {"BANK_CONCURRENCY_MIN", "0"},
                                                                {"BANK_SLOW_CALL_MS", "0"}};
  for (const auto& [name, value] : bad) {
    env = {{name, value}};
    auto s = load();
    ASSERT_FALSE(s) << name << "=" << value;
    EXPECT_THAT(s.error().line, StartsWith(name + ": must be an integer"));
    EXPECT_EQ(s.error().line.find('\n'), std::string::npos);
  }
}

TEST_F(OutageSettingsTest, BoundsThatDependOnAnotherSettingNameIt) {
  env = {{"CIRCUIT_WINDOW", "10"}, {"CIRCUIT_MIN_CALLS", "11"}};
  EXPECT_THAT(load().error().line, HasSubstr("at most CIRCUIT_WINDOW"));
  env = {{"CIRCUIT_PROBE_MIN_MS", "5000"}, {"CIRCUIT_PROBE_MAX_MS", "4000"}};
  EXPECT_THAT(load().error().line, HasSubstr("at least CIRCUIT_PROBE_MIN_MS"));
  env = {{"BANK_CONCURRENCY_MIN", "4"}, {"BANK_CONCURRENCY_MAX", "3"}};
  EXPECT_THAT(load().error().line, HasSubstr("at least BANK_CONCURRENCY_MIN"));
}

TEST_F(OutageSettingsTest, TheRunSettingsCarryThem) {
  auto all = std::find_if(all_settings().begin(), all_settings().end(),
                          [](const SettingSpec& spec) { return spec.env == "BANK_MAX_RPS"; });
  ASSERT_NE(all, all_settings().end());
  EXPECT_EQ(all->flag, "--bank-max-rps");
}

// The bank's memory of keys (docs/design.md §3 and §5, issue 35).
class HorizonSettingsTest : public ::testing::Test {
 protected:
  std::expected<BankHorizonSettings, ConfigError> load(
      std::map<std::string, std::string, std::less<>> env, std::vector<std::string> flags = {}) {
    env_ = std::move(env);
    source_ = std::make_unique<SettingsSource>([this](std::string_view name) {
      auto it = env_.find(name);
      return it == env_.end() ? std::nullopt : std::optional<std::string>(it->second);
    });
    CLI::App app;
    source_->add_flags(app, {"BANK_IDEMPOTENCY_WINDOW", "BANK_STATUS_INQUIRY"});
    std::vector<std::string> args(flags.rbegin(), flags.rend());
    app.parse(args);
    return load_horizon_settings(*source_);
  }

  std::map<std::string, std::string, std::less<>> env_;
  std::unique_ptr<SettingsSource> source_;
};

TEST_F(HorizonSettingsTest, ADayAndNoInquiryByDefault) {
  auto s = load({});
  ASSERT_TRUE(s) << s.error().line;
  EXPECT_EQ(s->window, std::optional<Millis>(std::chrono::hours(24)));
  EXPECT_FALSE(s->status_inquiry);
}

TEST_F(HorizonSettingsTest, DurationsNoneAndFlags) {
  EXPECT_EQ(load({{"BANK_IDEMPOTENCY_WINDOW", "5s"}})->window,
            std::optional<Millis>(std::chrono::seconds(5)));
  EXPECT_EQ(load({{"BANK_IDEMPOTENCY_WINDOW", "30m"}})->window,
            std::optional<Millis>(std::chrono::minutes(30)));
  EXPECT_EQ(load({{"BANK_IDEMPOTENCY_WINDOW", "7d"}})->window,
            std::optional<Millis>(std::chrono::days(7)));
  EXPECT_EQ(load({{"BANK_IDEMPOTENCY_WINDOW", "none"}})->window, std::nullopt);
  auto flagged = load({}, {"--bank-idempotency-window", "2h", "--bank-status-inquiry", "true"});
  ASSERT_TRUE(flagged) << flagged.error().line;
  EXPECT_EQ(flagged->window, std::optional<Millis>(std::chrono::hours(2)));
  EXPECT_TRUE(flagged->status_inquiry);
}

TEST_F(HorizonSettingsTest, MalformedValuesAreOneLineNamingTheSetting) {
  for (const char* bad : {"0s", "24", "1w", "-5s", "3651d", "forever"}) {
    auto s = load({{"BANK_IDEMPOTENCY_WINDOW", bad}});
    ASSERT_FALSE(s) << bad;
    EXPECT_THAT(s.error().line, ::testing::StartsWith("BANK_IDEMPOTENCY_WINDOW: "));
  }
  auto s = load({{"BANK_STATUS_INQUIRY", "yes"}});
  ASSERT_FALSE(s);
  EXPECT_EQ(s.error().line, "BANK_STATUS_INQUIRY: must be true or false, got 'yes'");
}

}  // namespace
}  // namespace ic::app
