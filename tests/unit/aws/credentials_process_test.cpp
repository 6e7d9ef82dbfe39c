// credential_process: the command-line splitter (checked against sh itself), the process
// runner with small scripts as the process, the output parser, and the profile's order.
#include "aws/credentials/credentials_process.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <stop_token>
#include <thread>

#include "aws/credentials/command_line.hpp"
#include "aws/credentials/credentials_cache.hpp"
#include "aws/credentials/credentials_chain.hpp"
#include "aws/credentials/credentials_profile.hpp"
#include "core/small_file.hpp"
#include "testing/aws_env.hpp"
#include "testing/clocks.hpp"
#include "testing/fixed_random.hpp"
#include "testing/scripted_transport.hpp"

namespace ic::aws {
namespace {

using namespace std::chrono_literals;
using testing::expect_no_secret;
using testing::FakeEnv;
using testing::kSecretKey;
using testing::kSessionToken;
using testing::lookup;
using testing::ScratchDir;

using Words = std::vector<std::string>;

// An executable script in `dir`.
std::string script(const ScratchDir& dir, const std::string& name, std::string_view body) {
  const auto path = dir.write(name, fmt::format("#!/bin/sh\n{}\n", body));
  std::filesystem::permissions(path, std::filesystem::perms::owner_all);
  return path;
}

std::string output(std::string_view key_id, std::string_view extra = "") {
  return fmt::format(R"({{"Version": 1, "AccessKeyId": "{}", "SecretAccessKey": "{}"{}}})", key_id,
                     kSecretKey, extra);
}

TEST(CommandLine, SplitsLikeSh) {
  const std::vector<std::pair<std::string, Words>> cases = {
      {"/opt/bin/creds", {"/opt/bin/creds"}},
      {"  creds  --a\t--b\n", {"creds", "--a", "--b"}},
      {R"(creds --profile "prod eu" 'it''s' a\ b)",
       {"creds", "--profile", "prod eu", "its", "a b"}},
      {R"(creds "" '' "x\"y\\z\$w" 'lit\eral' a#b a~b)",
       {"creds", "", "", R"(x"y\z$w)", R"(lit\eral)", "a#b", "a~b"}},
      {"creds a=b '$HOME'", {"creds", "a=b", "$HOME"}},
  };
  for (const auto& [line, expected] : cases) {
    const auto words = split_command_line(line);
    ASSERT_TRUE(words.has_value()) << line << ": " << words.error();
    EXPECT_EQ(*words, expected) << line;
  }
}

TEST(CommandLine, RefusesWhatShWouldInterpret) {
  for (const auto* line : {"",
                           "   ",
                           "creds | jq .",
                           "creds; rm x",
                           "creds && x",
                           "creds > out",
                           "creds < in",
                           "$(creds)",
                           "`creds`",
                           "creds $HOME",
                           "creds \"$HOME\"",
                           "creds \"`x`\"",
                           "creds *.json",
                           "creds ?",
                           "creds [ab]",
                           "~/bin/creds",
                           "creds #comment",
                           "A=1 creds",
                           "! creds",
                           "(creds)",
                           "creds &",
                           "creds 'unterminated",
                           "creds \"unterminated",
                           "creds \\"}) {
    const auto words = split_command_line(line);
    EXPECT_FALSE(words.has_value()) << line;
  }
}

// Every accepted line must give the words sh gives it: ask sh, through the runner.
TEST(CommandLine, AgreesWithShOnAcceptedLines) {
  for (const auto* line :
       {R"(creds --profile "prod eu" 'it''s' a\ b)", R"(creds "" '' "x\"y\\z\$w" 'lit\eral')",
        "creds a#b a~b a=b \"a\\\nb\" \"q\\'\"", R"(creds "tab	in" mi"x"'ed'\"s)"}) {
    const auto ours = split_command_line(line);
    ASSERT_TRUE(ours.has_value()) << line;
    const auto sh =
        run_process({"/bin/sh", "-c", fmt::format("set -- {}; printf '%s\\n' \"$@\"", line)}, {});
    ASSERT_TRUE(sh.has_value()) << sh.error().reason;
    std::string expected;
    for (const auto& word : *ours) expected += word + "\n";
    EXPECT_EQ(sh->out, expected) << line;
  }
}

RC_GTEST_PROP(CommandLine, AnyInputGivesAValue, (const std::string& line)) {
  const auto words = split_command_line(line);
  const bool answered = words.has_value() ? !words->empty() : !words.error().empty();
  RC_ASSERT(answered);
}

TEST(ProcessRunner, CollectsOutputAndExitStatus) {
  ScratchDir dir;
  const auto path = script(dir, "p", "echo out; echo err >&2; exit 3");
  const auto done = run_process({path}, {});
  ASSERT_TRUE(done.has_value()) << done.error().reason;
  EXPECT_EQ(done->exit_status, 3);
  EXPECT_EQ(done->out, "out\n");
  EXPECT_EQ(done->err, "err\n");
}

TEST(ProcessRunner, TimeoutKillsTheWholeGroup) {
  ScratchDir dir;
  const auto pid_file = dir.path() + "/grandchild";
  const auto path = script(dir, "slow", fmt::format("sleep 300 & echo $! > {}; wait", pid_file));
  const auto done = run_process({path}, {.timeout = 500ms});
  ASSERT_FALSE(done.has_value());
  EXPECT_TRUE(done.error().timed_out);
  // The grandchild went with its group: poll until the kernel has reaped it.
  const auto written = read_small_file(pid_file, 32);
  ASSERT_TRUE(written.has_value());
  const pid_t grandchild = std::stoi(*written);
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (::kill(grandchild, 0) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(10ms);
  }
  EXPECT_NE(::kill(grandchild, 0), 0);
}

TEST(ProcessRunner, TooMuchOutputIsAnError) {
  ScratchDir dir;
  const auto path = script(dir, "loud", "yes credentials");
  const auto done = run_process({path}, {.max_stdout = 1024});
  ASSERT_FALSE(done.has_value());
  EXPECT_FALSE(done.error().timed_out);
  EXPECT_NE(done.error().reason.find("more than 1024 bytes"), std::string::npos);
}

TEST(ProcessRunner, MissingProgramAndSignalsAreReported) {
  const auto missing = run_process({"/nonexistent/creds"}, {});
  ASSERT_FALSE(missing.has_value());
  EXPECT_NE(missing.error().reason.find("cannot start"), std::string::npos);
  ScratchDir dir;
  const auto done = run_process({script(dir, "self-kill", "kill -TERM $$")}, {});
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->exit_status, 128 + SIGTERM);
}

// The consumer blocks SIGTERM in every thread; its helper must still die of SIGTERM.
TEST(ProcessRunner, ChildDoesNotInheritABlockedSignalMask) {
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &old);
  ScratchDir dir;
  const auto done = run_process({script(dir, "self-kill", "kill -TERM $$; exit 0")}, {});
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(done.has_value());
  EXPECT_EQ(done->exit_status, 128 + SIGTERM);
}

TEST(ProcessOutput, ParsesTheDocumentedShape) {
  const auto creds = parse_process_output(output(
      "ASIAPROC", fmt::format(R"(, "SessionToken": "{}", "Expiration": "2026-11-30T10:00:00Z")",
                              kSessionToken)));
  ASSERT_TRUE(creds.has_value()) << creds.error().message;
  EXPECT_EQ(creds->access_key_id, "ASIAPROC");
  EXPECT_EQ(creds->secret_access_key, kSecretKey);
  EXPECT_EQ(creds->session_token, kSessionToken);
  EXPECT_TRUE(creds->expiration.has_value());
  const auto long_term = parse_process_output(output("AKIAPROC"));
  ASSERT_TRUE(long_term.has_value());
  EXPECT_FALSE(long_term->expiration.has_value());
  EXPECT_TRUE(long_term->session_token.empty());
}

TEST(ProcessOutput, EveryOtherShapeIsInvalidAndQuotesNoValue) {
  const std::string secret(kSecretKey);
  for (const std::string& out :
       {std::string(""), std::string("[]"), std::string("not json ") + secret,
        output("A").replace(output("A").find("1"), 1, "2"),
        output("A").replace(output("A").find("1"), 1, "1.0"),
        output("A").replace(output("A").find("1"), 1, "\"1\""),
        fmt::format(R"({{"Version":1,"SecretAccessKey":"{}"}})", secret),
        fmt::format(R"({{"Version":1,"AccessKeyId":"","SecretAccessKey":"{}"}})", secret),
        fmt::format(R"({{"Version":1,"AccessKeyId":7,"SecretAccessKey":"{}"}})", secret),
        output("A", R"(, "SessionToken": 5)"), output("A", R"(, "Expiration": "soon")"),
        output("A", R"(, "Expiration": null)")}) {
    const auto creds = parse_process_output(out);
    ASSERT_FALSE(creds.has_value()) << out;
    EXPECT_EQ(creds.error().code, "InvalidCredentials");
    expect_no_secret(creds.error());
  }
}

RC_GTEST_PROP(ProcessOutput, AnyBytesGiveAValue, (const std::string& out)) {
  const auto creds = parse_process_output(out);
  const bool answered = creds.has_value() || !creds.error().message.empty();
  RC_ASSERT(answered);
}

TEST(ProcessCredentials, NonZeroExitQuotesABoundedPrintableStderr) {
  ScratchDir dir;
  const auto path =
      script(dir, "fails",
             fmt::format("echo '{}'; printf 'token expired\\001' >&2; head -c 5000 /dev/zero | tr "
                         "'\\0' x >&2; exit 2",
                         output("ASIA")));
  const auto creds = process_credentials(path);
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().code, "CredentialsFetchFailed");
  EXPECT_NE(creds.error().message.find("exited with status 2: token expired "), std::string::npos)
      << creds.error().message;
  EXPECT_LT(creds.error().message.size(), 400u);
  expect_no_secret(creds.error());
}

TEST(ProcessCredentials, TimeoutIsRetryable) {
  ScratchDir dir;
  const auto creds =
      process_credentials(script(dir, "hangs", "exec sleep 300"), {.timeout = 200ms});
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().error_class, ErrorClass::Retryable);
}

// A consumer that stops must not wait out a program that hangs: the stop kills it (the 60 s
// timeout would otherwise end the run, with another reason).
TEST(ProcessCredentials, AStopKillsAProgramThatHangs) {
  ScratchDir dir;
  const std::string started = dir.path() + "/started";
  const auto path = script(dir, "hangs", fmt::format("touch '{}'\nexec sleep 300", started));
  std::stop_source stop;
  const std::jthread stopper([&] {
    const auto deadline = std::chrono::steady_clock::now() + 30s;
    while (!std::filesystem::exists(started) && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(5ms);
    }
    stop.request_stop();
  });
  const auto creds = process_credentials(path, {.timeout = 60s, .cancel = stop.get_token()});
  ASSERT_FALSE(creds.has_value());
  EXPECT_EQ(creds.error().error_class, ErrorClass::Retryable);
  EXPECT_NE(creds.error().message.find("the consumer is stopping"), std::string::npos)
      << creds.error().message;
}

class ProcessProfileTest : public ::testing::Test {
 protected:
  std::expected<Credentials, AwsError> fetch() {
    return ProfileCredentialsProvider(lookup(env)).credentials();
  }
  ScratchDir dir;
  FakeEnv env{{"HOME", dir.path()}};
};

TEST_F(ProcessProfileTest, RunsTheProfilesCommandWithItsArguments) {
  const auto path = script(
      dir, "bin/creds", fmt::format("[ \"$1\" = 'prod eu' ] || exit 9; echo '{}'", output("$1")));
  dir.write(".aws/config",
            fmt::format("[profile prod]\ncredential_process = {} \"prod eu\"\n", path));
  env["AWS_PROFILE"] = "prod";
  const auto creds = fetch();
  ASSERT_TRUE(creds.has_value()) << creds.error().message;
  EXPECT_EQ(creds->access_key_id, "$1");  // single-quoted in the script: no expansion there
}

TEST_F(ProcessProfileTest, BotocoreOrderAcrossTheTwoFiles) {
  const auto path = script(dir, "creds", fmt::format("echo '{}'", output("PROCESS")));
  dir.write(".aws/config",
            fmt::format("[default]\ncredential_process = {}\naws_access_key_id = CONFIG\n"
                        "aws_secret_access_key = c\n",
                        path));
  EXPECT_EQ(fetch()->access_key_id, "PROCESS");  // the process wins over the config file's keys
  dir.write(".aws/credentials", "[default]\naws_access_key_id = FILE\naws_secret_access_key = f\n");
  EXPECT_EQ(fetch()->access_key_id, "FILE");  // the credentials file's keys win over both
}

TEST_F(ProcessProfileTest, ShellSyntaxIsRefusedNotRun) {
  const auto marker = dir.path() + "/ran";
  dir.write(".aws/config", fmt::format("[default]\ncredential_process = touch {} | cat\n", marker));
  const auto creds = fetch();
  ASSERT_FALSE(creds.has_value());
  EXPECT_NE(creds.error().message.find("shell syntax"), std::string::npos);
  EXPECT_FALSE(std::filesystem::exists(marker));
}

// Refresh on expiry: the cache runs the command again (on its refresher) before the keys expire.
TEST_F(ProcessProfileTest, ChainRunsTheCommandAgainBeforeExpiration) {
  const auto counter = dir.path() + "/runs";
  const auto path = script(
      dir, "creds",
      fmt::format("n=$(($(cat {0} 2>/dev/null || echo 0) + 1)); echo $n > {0}; "
                  "printf '{{\"Version\":1,\"AccessKeyId\":\"RUN%s\",\"SecretAccessKey\":\"s\","
                  "\"Expiration\":\"2026-11-30T01:00:00Z\"}}' $n",
                  counter));
  dir.write(".aws/config", fmt::format("[default]\ncredential_process = {}\n", path));
  env["AWS_EC2_METADATA_DISABLED"] = "true";

  testing::ManualClock clock{std::chrono::sys_days{std::chrono::year{2026} / 11 / 30}};
  testing::ScriptedTransport transport;
  testing::FixedRandom random{1.0};
  CredentialsCache cache(make_default_credentials_chain(lookup(env), transport.blocking(), clock),
                         clock, random);
  ASSERT_TRUE(cache.refresh_if_due());
  EXPECT_EQ(cache.credentials()->access_key_id, "RUN1");
  EXPECT_EQ(cache.active_provider(), "profile");
  EXPECT_FALSE(cache.status().stale);
  clock.advance(44min);
  EXPECT_FALSE(cache.refresh_if_due());
  EXPECT_EQ(cache.credentials()->access_key_id, "RUN1");  // cached
  clock.advance(1min);
  EXPECT_TRUE(cache.refresh_if_due());
  EXPECT_EQ(cache.credentials()->access_key_id, "RUN2");  // 15 minutes before Expiration
  EXPECT_TRUE(transport.requests().empty());
}

}  // namespace
}  // namespace ic::aws
