// Bearer-token authentication of both bank clients against a scripted local server: the header,
// rotation picked up from the file, the one retry after a 401, and unusable token files as a
// misconfiguration -- never the token in a detail. (Mutual TLS is exercised end to end against
// the TLS fake bank in tests/system/test_bank_auth.py.)
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <functional>
#include <thread>

#include "adapters/bank/bearer_token_file.hpp"
#include "adapters/bank/core_banking_client.hpp"
#include "adapters/bank/notification_client.hpp"
#include "core/small_file.hpp"
#include "testing/aws_env.hpp"
#include "testing/bank_client_fixture.hpp"
#include "testing/scripted_bank_server.hpp"

namespace ic::bank {
namespace {

using ic::testing::BankClientTest;
using ic::testing::kTimeouts;
using ic::testing::Reply;
using ic::testing::ScratchDir;
using ic::testing::ScriptedBankServer;
using ::testing::HasSubstr;
using ::testing::Not;

using namespace std::chrono_literals;

constexpr std::string_view kDebited = R"({"debitId":"DBT-1"})";
// The watcher's checks in these tests: often, so a rotation is seen within a few ms.
constexpr Millis kQuickChecks{5};

// Polls until `condition` holds or 10 s passed: the watcher thread sees a change on its own time.
bool eventually(const std::function<bool()>& condition) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(2ms);
  }
  return true;
}

class BankAuthTest : public BankClientTest {
 protected:
  BankEndpoint endpoint(const ScriptedBankServer& server) {
    return BankEndpoint::create(server.base_url(), kTimeouts).value();
  }
  domain::DebitResult debit(ScriptedBankServer& server, BearerTokenFile& token) {
    return event::run_blocking(
        CoreBankingClient(transport_, endpoint(server), &token).debit(charge_, "CHG-1"));
  }
  // Replies 201 to `accepted`'s current content as a bearer token, 401 otherwise.
  static Reply accept_only(const std::string& accepted_file, const httplib::Request& request) {
    const auto expected = read_small_file(accepted_file, 1024).value_or("");
    if (request.get_header_value("Authorization") == "Bearer " + trim_blank(expected)) {
      return {.status = 201, .body = std::string(kDebited)};
    }
    return {.status = 401, .body = R"({"code":"UNAUTHORIZED"})"};
  }

  ScratchDir dir;
};

TEST_F(BankAuthTest, EveryCallCarriesTheBearerToken) {
  ScriptedBankServer server(Reply{.status = 201, .body = std::string(kDebited)});
  BearerTokenFile token(dir.write("token", "tok-1\n"));
  EXPECT_TRUE(std::holds_alternative<domain::Debited>(debit(server, token)));
  NotificationClient notifier(transport_, endpoint(server), &token);
  EXPECT_TRUE(std::holds_alternative<domain::NotificationSent>(
      event::run_blocking(notifier.notify(charge_, "DBT-1", "CHG-1:notify"))));
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  for (const auto& request : requests) EXPECT_EQ(request.header("Authorization"), "Bearer tok-1");
}

TEST_F(BankAuthTest, NoTokenFileNoHeader) {
  ScriptedBankServer server(Reply{.status = 201, .body = std::string(kDebited)});
  EXPECT_TRUE(std::holds_alternative<domain::Debited>(event::run_blocking(
      CoreBankingClient(transport_, endpoint(server)).debit(charge_, "CHG-1"))));
  EXPECT_EQ(server.requests().at(0).header("Authorization"), "");
}

TEST_F(BankAuthTest, RotatedFileIsUsedOnTheNextCall) {
  const auto accepted = dir.write("accepted", "tok-1");
  ScriptedBankServer server(
      [&](const httplib::Request& request) { return accept_only(accepted, request); });
  BearerTokenFile token(dir.write("token", "tok-1"), kQuickChecks);
  ASSERT_TRUE(std::holds_alternative<domain::Debited>(debit(server, token)));
  dir.write("accepted", "tok-2-longer");
  dir.write("token", "tok-2-longer");
  ASSERT_TRUE(eventually([&] { return token.current() == "tok-2-longer"; }));
  EXPECT_TRUE(std::holds_alternative<domain::Debited>(debit(server, token)));
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);  // the change was seen before sending: no 401 round trip
  EXPECT_EQ(requests[1].header("Authorization"), "Bearer tok-2-longer");
}

// The file changes between our check and the bank's answer: the 401 makes one re-read and
// one more attempt with the new token.
TEST_F(BankAuthTest, A401AfterRotationIsRetriedOnceWithTheNewToken) {
  const auto token_path = dir.write("token", "tok-old");
  const auto accepted = dir.write("accepted", "tok-new");
  std::atomic<int> calls{0};
  ScriptedBankServer server([&](const httplib::Request& request) {
    if (calls++ == 0) dir.write("token", "tok-new");  // rotated while the request was in flight
    return accept_only(accepted, request);
  });
  BearerTokenFile token(token_path, 1h);  // only the 401's reload can see the rotation
  ASSERT_TRUE(token.current().has_value());
  EXPECT_TRUE(std::holds_alternative<domain::Debited>(debit(server, token)));
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].header("Authorization"), "Bearer tok-old");
  EXPECT_EQ(requests[1].header("Authorization"), "Bearer tok-new");
  EXPECT_EQ(requests[0].header("Idempotency-Key"), requests[1].header("Idempotency-Key"));
}

TEST_F(BankAuthTest, A401WithAnUnchangedTokenIsMisconfiguredAfterOneRequest) {
  ScriptedBankServer server(Reply{.status = 401, .body = R"({"code":"UNAUTHORIZED"})"});
  BearerTokenFile token(dir.write("token", "tok-SECRET"));
  const auto result = debit(server, token);
  const auto* misconfigured = std::get_if<domain::DebitMisconfigured>(&result);
  ASSERT_NE(misconfigured, nullptr);
  EXPECT_THAT(misconfigured->detail, HasSubstr("HTTP 401"));
  EXPECT_THAT(misconfigured->detail, Not(HasSubstr("tok-SECRET")));
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(BankAuthTest, UnusableTokenFileIsMisconfiguredAndNothingIsSent) {
  ScriptedBankServer server(Reply{.status = 201, .body = std::string(kDebited)});
  const auto path = dir.write("token", "tok-1");
  BearerTokenFile token(path, kQuickChecks);
  ASSERT_TRUE(token.current().has_value());
  for (const std::string_view content : {"", "two words", "line\r\nX-Injected: 1"}) {
    dir.write("token", content);
    ASSERT_TRUE(eventually([&] { return !token.current(); })) << content;
    const auto result = debit(server, token);
    ASSERT_TRUE(std::holds_alternative<domain::DebitMisconfigured>(result)) << content;
  }
  std::filesystem::remove(path);
  ASSERT_TRUE(eventually(
      [&] { return !token.current() && token.current().error().starts_with("cannot be read"); }));
  const auto result = debit(server, token);
  ASSERT_TRUE(std::holds_alternative<domain::DebitMisconfigured>(result));
  EXPECT_THAT(std::get<domain::DebitMisconfigured>(result).detail,
              HasSubstr("bearer token file cannot be read"));
  NotificationClient notifier(transport_, endpoint(server), &token);
  EXPECT_TRUE(std::holds_alternative<domain::NotificationFailed>(
      event::run_blocking(notifier.notify(charge_, "DBT-1", "CHG-1:notify"))));
  EXPECT_TRUE(server.requests().empty());
}

TEST(BearerTokenFile, ReadsAtStartThenTheWatcherPicksUpAReplacedFile) {
  ScratchDir dir;
  const auto path = dir.write("token", " tok-1 \n");
  BearerTokenFile token(path, kQuickChecks);
  EXPECT_EQ(token.current().value(), "tok-1");
  // Replaced by a new file (a new inode), as secret volumes and `mv` rotate it.
  const auto next = dir.write("token.next", "tok-2");
  std::filesystem::rename(next, path);
  EXPECT_TRUE(eventually([&] { return token.current() == "tok-2"; }));
  EXPECT_FALSE(BearerTokenFile(dir.path() + "/absent").current().has_value());
  EXPECT_FALSE(BearerTokenFile(dir.write("huge", std::string(16 * 1024 + 1, 'a'))).current());
}

// The loop's side never touches the file: current() copies what the watcher read, and
// reload() is read by the watcher while the calling loop waits on a task.
TEST(BearerTokenFile, TheCallerNeverReadsTheFileItself) {
  ScratchDir dir;
  const auto path = dir.write("token", "tok-1");
  BearerTokenFile token(path, 1h);  // the watcher checks only when asked
  std::filesystem::remove(path);
  EXPECT_EQ(token.current().value(), "tok-1") << "no stat on the call";
  dir.write("token", "tok-2");
  EXPECT_EQ(event::run_blocking(token.reload()).value(), "tok-2");
  EXPECT_EQ(token.current().value(), "tok-2");
}

}  // namespace
}  // namespace ic::bank
