// The `consumer started` line names every setting that is not its default (issue 24: with
// AWS_ENDPOINT_URL pointing elsewhere, a line with only the queue URL misled).
#include "app/startup_summary.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <CLI/CLI.hpp>
#include <map>

namespace ic::app {
namespace {

TEST(StartupSummaryTest, NamesTheNonDefaultSettingsInHelpOrderFlagsIncluded) {
  const std::map<std::string, std::string, std::less<>> env = {
      {"AWS_REGION", "ap-south-1"},
      {"AWS_ENDPOINT_URL", "http://127.0.0.1:5000"},
      {"LEASE_SECONDS", "60"},  // the default, given explicitly: not listed
      {"WORKERS", "8"},
      {"NOT_A_SETTING", "x"}};
  SettingsSource source([&env](std::string_view name) {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  });
  CLI::App app;
  source.add_flags(app, {"RECEIVERS"});
  app.parse(std::vector<std::string>{"3", "--receivers"});
  EXPECT_EQ(non_default_settings(source),
            "AWS_REGION=ap-south-1 AWS_ENDPOINT_URL=http://127.0.0.1:5000 WORKERS=8 RECEIVERS=3");
}

TEST(StartupSummaryTest, UserInfoOfAUrlIsMasked) {
  EXPECT_EQ(mask_url_user_info("https://svc:hunter2@core.bank/v1?a=b@c"),
            "https://***@core.bank/v1?a=b@c");
  EXPECT_EQ(mask_url_user_info("https://core.bank/v1?who=a@b"), "https://core.bank/v1?who=a@b");
  EXPECT_EQ(mask_url_user_info("/var/run/secrets/token"), "/var/run/secrets/token");
  EXPECT_EQ(mask_url_user_info("http://u@h"), "http://***@h");
}

}  // namespace
}  // namespace ic::app
