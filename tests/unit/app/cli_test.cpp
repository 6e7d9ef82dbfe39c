// The command line as an operator meets it: usage errors are one line and exit 2, --version is
// everywhere, integer flags say INT, and the operator commands check their arguments before
// any AWS call (the environment here has no endpoint, so reaching AWS would fail differently).
#include "app/cli.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "app/build_info.hpp"

namespace ic::app {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

struct Ran {
  int code;
  std::string out;
  std::string err;
};

Ran run(std::vector<std::string> args, std::map<std::string, std::string, std::less<>> env = {}) {
  args.insert(args.begin(), "charge-recovery");
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  const aws::EnvLookup lookup = [&env](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional(it->second);
  };
  ::testing::internal::CaptureStdout();
  ::testing::internal::CaptureStderr();
  const int code = run_cli(static_cast<int>(argv.size()), argv.data(), lookup);
  std::string out = ::testing::internal::GetCapturedStdout();
  std::string err = ::testing::internal::GetCapturedStderr();
  return {code, std::move(out), std::move(err)};
}

std::size_t lines(const std::string& text) {
  return static_cast<std::size_t>(std::ranges::count(text, '\n'));
}

TEST(CliTest, AnUnknownFlagIsOneLineAndExitTwo) {
  const Ran r = run({"status", "CHG-1", "--no-such-flag"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, StartsWith("usage error: "));
  EXPECT_THAT(r.err, HasSubstr("--no-such-flag"));
  EXPECT_EQ(lines(r.err), 1u) << r.err;
}

TEST(CliTest, AMissingSubcommandIsOneLineAndExitTwo) {
  const Ran r = run({});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, StartsWith("usage error: "));
  EXPECT_EQ(lines(r.err), 1u) << r.err;
}

TEST(CliTest, AnUnknownSubcommandIsNamedWithTheChoices) {
  const Ran r = run({"bogus", "--table", "t"});
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, StartsWith("usage error: unknown subcommand 'bogus'; choose one of: run, "));
  EXPECT_THAT(r.err, HasSubstr("redrive"));
  EXPECT_EQ(lines(r.err), 1u) << r.err;
}

TEST(CliTest, VersionOnTheBinaryAndOnEverySubcommand) {
  const std::string expected =
      "charge-recovery " + std::string(kVersion) + " (commit " + std::string(kCommit) + ")";
  EXPECT_FALSE(kCommit.empty());
  const Ran top = run({"--version"});
  EXPECT_EQ(top.code, 0);
  EXPECT_THAT(top.out, HasSubstr(expected));
  for (const char* sub :
       {"run", "provision", "send", "status", "redrive", "list", "renotify", "reopen"}) {
    const Ran version = run({sub, "--version"});
    EXPECT_EQ(version.code, 0) << sub;
    EXPECT_THAT(version.out, HasSubstr(expected)) << sub;
    const Ran help = run({sub, "--help"});
    EXPECT_EQ(help.code, 0) << sub;
    EXPECT_THAT(help.out, HasSubstr(expected)) << sub << " --help names the version";
  }
}

TEST(CliTest, IntegerFlagsAreShownAsNumbersInHelp) {
  const Ran help = run({"run", "--help"});
  for (const char* flag :
       {"--lease-seconds INT", "--workers INT", "--retention-days INT",
        "--shutdown-grace-seconds INT", "--receivers INT", "--probe-interval-seconds INT"}) {
    EXPECT_THAT(help.out, HasSubstr(flag));
  }
  EXPECT_THAT(help.out, HasSubstr("--table TEXT"));
  EXPECT_THAT(run({"redrive", "--help"}).out, HasSubstr("--max INT"));
  EXPECT_THAT(run({"list", "--help"}).out, HasSubstr("--older-than-leases INT"));
}

TEST(CliTest, OperatorCommandsRefuseBadArgumentsBeforeAnyAwsCall) {
  const std::map<std::string, std::string, std::less<>> env = {{"AWS_REGION", "ap-south-1"},
                                                               {"IDEMPOTENCY_TABLE", "t"}};
  EXPECT_EQ(run({"reopen", "CHG-1"}, env).code, 2) << "--reason is required";
  EXPECT_EQ(run({"reopen", "CHG-1", "--reason", "  "}, env).code, 2) << "a blank reason";
  EXPECT_EQ(run({"list", "--status", "DONE"}, env).code, 2);
  EXPECT_EQ(run({"list"}, env).code, 2) << "--status is required";
  EXPECT_EQ(run({"redrive", "--reason", "WHATEVER"}, env).code, 2);
  EXPECT_EQ(run({"renotify", "CHG-1", "--all-failed-notifications"}, env).code, 2);
  const Ran neither = run({"renotify"}, env);
  EXPECT_EQ(neither.code, 2);
  EXPECT_EQ(lines(neither.err), 1u) << neither.err;
  const Ran since = run({"list", "--status", "FAILED", "--since", "last week"}, env);
  EXPECT_EQ(since.code, 2);
  EXPECT_THAT(since.err, StartsWith("configuration error: --since: "));
  const Ran no_url = run({"renotify", "CHG-1"}, env);
  EXPECT_EQ(no_url.code, 2);
  EXPECT_THAT(no_url.err, HasSubstr("NOTIFICATION_URL"));
}

}  // namespace
}  // namespace ic::app
