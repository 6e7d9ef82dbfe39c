// NotificationClient against a scripted local server over the real curl transport: the request
// it sends, 2xx versus everything else, transport failures and masked details.
#include "adapters/bank/notification_client.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "core/trace_context.hpp"
#include "testing/bank_client_fixture.hpp"
#include "testing/bound_socket.hpp"
#include "testing/scripted_bank_server.hpp"

namespace ic::bank {
namespace {

using namespace std::chrono_literals;
using ic::testing::BankClientTest;
using ic::testing::BoundSocket;
using ic::testing::kAccount;
using ic::testing::kTimeouts;
using ic::testing::Reply;
using ic::testing::ScriptedBankServer;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kKey = "CHG-20261130-000123:notify";

class NotificationClientTest : public BankClientTest {
 protected:
  domain::NotificationResult notify_against(const std::string& base_url,
                                            http::HttpTimeouts timeouts = kTimeouts,
                                            std::string_view key = kKey) {
    return event::run_blocking(
        client_for<NotificationClient>(base_url, timeouts).notify(charge_, "DBT-0000000001", key));
  }

  static std::string failure_detail(const domain::NotificationResult& result) {
    const auto* failed = std::get_if<domain::NotificationFailed>(&result);
    EXPECT_NE(failed, nullptr) << "expected NotificationFailed";
    return failed == nullptr ? std::string() : failed->detail;
  }
};

TEST_F(NotificationClientTest, PostsTheDebitAsJsonWithTheIdempotencyKey) {
  ScriptedBankServer server(Reply{202, R"({"key":"CHG-20261130-000123:notify"})"});
  EXPECT_TRUE(std::holds_alternative<domain::NotificationSent>(
      notify_against(server.base_url() + "/notify/")));
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/notify/v1/notifications");
  EXPECT_EQ(requests[0].header("Idempotency-Key"), kKey);
  EXPECT_EQ(requests[0].header("Content-Type"), "application/json");
  EXPECT_EQ(nlohmann::json::parse(requests[0].body),
            nlohmann::json({{"chargeId", "CHG-20261130-000123"},
                            {"accountId", kAccount},
                            {"debitId", "DBT-0000000001"},
                            {"amountMinor", 2500},
                            {"currency", "INR"},
                            {"chargeType", "SMS_ALERT_FEE"}}));
}

TEST_F(NotificationClientTest, SendsTheCurrentTraceContextAndNoneOutsideAScope) {
  ScriptedBankServer server(Reply{202, ""});
  auto notifier = client_for<NotificationClient>(server.base_url());
  auto traced = [&]() -> Task<domain::NotificationResult> {
    const TraceScope trace(
        parse_traceparent("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"));
    co_return co_await notifier.notify(charge_, "DBT-0000000001", kKey);
  };
  (void)event::run_blocking(traced());
  (void)notify_against(server.base_url());
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].header("traceparent"),
            "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
  EXPECT_EQ(requests[1].header("traceparent"), "");
}

TEST_F(NotificationClientTest, ADebitRefThatIsNotUtf8IsSentAsValidJsonNotThrown) {
  ScriptedBankServer server(Reply{202, ""});
  EXPECT_TRUE(std::holds_alternative<domain::NotificationSent>(event::run_blocking(
      client_for<NotificationClient>(server.base_url()).notify(charge_, "DBT-\xff\xfe", kKey))));
  ASSERT_EQ(server.requests().size(), 1u);
  const auto body = nlohmann::json::parse(server.requests()[0].body);
  EXPECT_EQ(body["debitId"], "DBT-\xEF\xBF\xBD\xEF\xBF\xBD");  // U+FFFD twice
}

TEST_F(NotificationClientTest, AnySuccessStatusIsSent) {
  for (int status : {200, 201, 202, 204}) {
    ScriptedBankServer server(Reply{status, status == 204 ? "" : "not even json"});
    EXPECT_TRUE(std::holds_alternative<domain::NotificationSent>(notify_against(server.base_url())))
        << status;
  }
}

TEST_F(NotificationClientTest, EveryOtherStatusIsAFailureNamingIt) {
  for (int status : {301, 400, 404, 409, 422, 429, 500, 503}) {
    ScriptedBankServer server(Reply{status, R"({"code":"NOTIFICATION_UNAVAILABLE"})"});
    EXPECT_THAT(failure_detail(notify_against(server.base_url())),
                HasSubstr("HTTP " + std::to_string(status) + " NOTIFICATION_UNAVAILABLE"));
  }
}

TEST_F(NotificationClientTest, TimeoutsAndRefusedConnectionsAreFailures) {
  {
    ScriptedBankServer server(Reply{202, "", /*hold_until_shutdown=*/true});
    EXPECT_THAT(
        failure_detail(notify_against(server.base_url(), {.connect = 200ms, .total = 300ms})),
        HasSubstr("timed out"));
  }
  BoundSocket refusing;
  EXPECT_THAT(failure_detail(notify_against(refusing.url())), HasSubstr("connection failed"));
}

TEST_F(NotificationClientTest, AKeyThatCouldRewriteTheRequestIsNeverSent) {
  ScriptedBankServer server(Reply{202, ""});
  EXPECT_THAT(failure_detail(notify_against(server.base_url(), kTimeouts, "CHG-1:notify\nX: y")),
              HasSubstr("invalid idempotency key"));
  EXPECT_TRUE(server.requests().empty());
}

TEST_F(NotificationClientTest, NoDetailEverContainsTheFullAccountNumber) {
  ScriptedBankServer server([](const httplib::Request& request) {
    return Reply{503, nlohmann::json({{"detail", request.body}, {"message", request.body}}).dump()};
  });
  const std::string detail = failure_detail(notify_against(server.base_url()));
  EXPECT_THAT(detail, Not(HasSubstr("0012345678")));
  EXPECT_THAT(detail, HasSubstr("**********5678"));
}

}  // namespace
}  // namespace ic::bank
