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

}  // namespace
}  // namespace ic::app
