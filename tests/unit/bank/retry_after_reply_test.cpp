// Retry-After on the bank's and the notification service's 429 and 503, over the real curl
// transport against a scripted local server: carried as retry_after, bounded, and a bad value
// ignored without an exception.
#include <gtest/gtest.h>

#include "adapters/bank/core_banking_client.hpp"
#include "adapters/bank/notification_client.hpp"
#include "http/retry_after.hpp"
#include "testing/bank_client_fixture.hpp"
#include "testing/clocks.hpp"
#include "testing/scripted_bank_server.hpp"

namespace ic::bank {
namespace {

using namespace std::chrono_literals;
using ic::testing::BankClientTest;
using ic::testing::kTimeouts;
using ic::testing::ManualClock;
using ic::testing::Reply;
using ic::testing::ScriptedBankServer;

class RetryAfterReplyTest : public BankClientTest {
 protected:
  // 2025-11-30T00:00:00Z, the date the HTTP-date cases count from.
  ManualClock clock_;

  std::optional<Millis> debit_retry_after(int status, std::string header) {
    ScriptedBankServer server(Reply{.status = status,
                                    .body = R"({"code":"TRANSIENT_FAILURE"})",
                                    .headers = {{"Retry-After", std::move(header)}}});
    auto endpoint = BankEndpoint::create(server.base_url(), kTimeouts);
    EXPECT_TRUE(endpoint);
    CoreBankingClient client(transport_, *endpoint, nullptr, clock_);
    const auto result = event::run_blocking(client.debit(charge_, "CHG-20261130-000123"));
    const auto* unavailable = std::get_if<domain::DebitUnavailable>(&result);
    EXPECT_NE(unavailable, nullptr) << "status " << status;
    return unavailable ? unavailable->retry_after : std::nullopt;
  }

  domain::NotificationFailed notify_failure(int status, std::string header) {
    ScriptedBankServer server(
        Reply{.status = status, .body = "{}", .headers = {{"Retry-After", std::move(header)}}});
    auto endpoint = BankEndpoint::create(server.base_url(), kTimeouts);
    EXPECT_TRUE(endpoint);
    NotificationClient client(transport_, *endpoint, nullptr, clock_);
    const auto result =
        event::run_blocking(client.notify(charge_, "DBT-1", "CHG-20261130-000123:notify"));
    const auto* failed = std::get_if<domain::NotificationFailed>(&result);
    EXPECT_NE(failed, nullptr);
    return failed ? *failed : domain::NotificationFailed{};
  }
};

TEST_F(RetryAfterReplyTest, A429WithDeltaSecondsCarriesThem) {
  EXPECT_EQ(debit_retry_after(429, "6"), 6000ms);
}

TEST_F(RetryAfterReplyTest, A503WithAnHttpDateCarriesTheTimeLeft) {
  EXPECT_EQ(debit_retry_after(503, "Sun, 30 Nov 2025 00:00:10 GMT"), 10'000ms);
}

TEST_F(RetryAfterReplyTest, AHugeValueIsBounded) {
  EXPECT_EQ(debit_retry_after(503, "999999"), http::kMaxRetryAfter);
}

TEST_F(RetryAfterReplyTest, ABadValueIsIgnored) {
  EXPECT_EQ(debit_retry_after(429, "soon"), std::nullopt);
  EXPECT_EQ(debit_retry_after(503, "-1"), std::nullopt);
}

TEST_F(RetryAfterReplyTest, OtherStatusesIgnoreIt) {
  EXPECT_EQ(debit_retry_after(500, "6"), std::nullopt);
  EXPECT_EQ(debit_retry_after(502, "6"), std::nullopt);
}

TEST_F(RetryAfterReplyTest, NoHeaderNoRetryAfter) {
  ScriptedBankServer server(Reply{429, "{}"});
  auto endpoint = BankEndpoint::create(server.base_url(), kTimeouts);
  ASSERT_TRUE(endpoint);
  CoreBankingClient client(transport_, *endpoint, nullptr, clock_);
  const auto result = event::run_blocking(client.debit(charge_, "CHG-20261130-000123"));
  ASSERT_TRUE(std::holds_alternative<domain::DebitUnavailable>(result));
  EXPECT_EQ(std::get<domain::DebitUnavailable>(result).retry_after, std::nullopt);
}

TEST_F(RetryAfterReplyTest, TheNotificationServiceCarriesItToo) {
  const auto failed = notify_failure(429, "3");
  EXPECT_TRUE(failed.transient);
  EXPECT_EQ(failed.retry_after, 3000ms);
  EXPECT_EQ(notify_failure(503, "Sun, 30 Nov 2025 00:00:02 GMT").retry_after, 2000ms);
}

TEST_F(RetryAfterReplyTest, ANotificationRefusalIsNotTransient) {
  const auto failed = notify_failure(422, "3");
  EXPECT_FALSE(failed.transient);
  EXPECT_EQ(failed.retry_after, std::nullopt);
  EXPECT_TRUE(notify_failure(500, "").transient);
}

}  // namespace
}  // namespace ic::bank
