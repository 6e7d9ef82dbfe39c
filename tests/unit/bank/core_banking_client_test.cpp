// CoreBankingClient against a scripted local server over the real curl transport: the request
// it sends, every status mapping of docs/design.md §5, transport failures, hostile replies, and
// that no detail ever carries the full account number.
#include "adapters/bank/core_banking_client.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <nlohmann/json.hpp>
#include <thread>

#include "core/trace_context.hpp"
#include "event/event_loop.hpp"
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
using ic::testing::make_charge;
using ic::testing::Reply;
using ic::testing::ScriptedBankServer;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr std::string_view kMaskedAccount = "**********5678";

class CoreBankingClientTest : public BankClientTest {
 protected:
  domain::DebitResult debit_against(const std::string& base_url,
                                    http::HttpTimeouts timeouts = kTimeouts,
                                    std::string_view key = "CHG-20261130-000123") {
    return event::run_blocking(
        client_for<CoreBankingClient>(base_url, timeouts).debit(charge_, key));
  }

  // The detail of an `Outcome` (DebitUnavailable or DebitMisconfigured); any other fails.
  template <class Outcome>
  static std::string detail_of(const domain::DebitResult& result) {
    const auto* outcome = std::get_if<Outcome>(&result);
    EXPECT_NE(outcome, nullptr) << "unexpected outcome, variant index " << result.index();
    return outcome == nullptr ? std::string() : outcome->detail;
  }
  static std::string unavailable_detail(const domain::DebitResult& result) {
    return detail_of<domain::DebitUnavailable>(result);
  }
  static std::string misconfigured_detail(const domain::DebitResult& result) {
    return detail_of<domain::DebitMisconfigured>(result);
  }

  static std::string rejected_code(const domain::DebitResult& result) {
    const auto* rejected = std::get_if<domain::DebitRejected>(&result);
    EXPECT_NE(rejected, nullptr) << "expected DebitRejected";
    return rejected == nullptr ? std::string() : rejected->code;
  }
};

TEST_F(CoreBankingClientTest, SendsTheProducersTraceContextAsTraceparent) {
  ScriptedBankServer server(Reply{201, R"({"debitId":"DBT-1"})"});
  auto client = client_for<CoreBankingClient>(server.base_url());
  // The scope is the handling task's, as a delivery's is.
  auto traced = [&]() -> Task<domain::DebitResult> {
    // Converted from X-Ray, as run.cpp does for a message with only an AWSTraceHeader.
    const TraceScope trace(parse_aws_trace_header(
        "Root=1-5759e988-bd862e3fe1be46a994272793;Parent=53995c3f42cd8ad8;Sampled=1"));
    co_return co_await client.debit(charge_, "CHG-20261130-000123");
  };
  (void)event::run_blocking(traced());
  (void)debit_against(server.base_url());
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 2u);
  EXPECT_EQ(requests[0].header("traceparent"),
            "00-5759e988bd862e3fe1be46a994272793-53995c3f42cd8ad8-01");
  EXPECT_EQ(requests[1].header("traceparent"), "");  // no scope, no header
}

TEST_F(CoreBankingClientTest, PostsTheChargeAsJsonWithTheIdempotencyKey) {
  ScriptedBankServer server(Reply{201, R"({"debitId":"DBT-1"})"});
  (void)debit_against(server.base_url() + "/core/");
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "POST");
  EXPECT_EQ(requests[0].path, "/core/v1/debits");
  EXPECT_EQ(requests[0].header("Idempotency-Key"), "CHG-20261130-000123");
  EXPECT_EQ(requests[0].header("Content-Type"), "application/json");
  const auto body = nlohmann::json::parse(requests[0].body);
  EXPECT_EQ(body, nlohmann::json({{"chargeId", "CHG-20261130-000123"},
                                  {"accountId", kAccount},
                                  {"amountMinor", 2500},
                                  {"currency", "INR"},
                                  {"chargeType", "SMS_ALERT_FEE"}}));
  EXPECT_TRUE(body["amountMinor"].is_number_integer());  // money is never a float on the wire
}

TEST_F(CoreBankingClientTest, FirstDebitIsNotAReplay) {
  ScriptedBankServer server(Reply{201, R"({"debitId":"DBT-0000000001"})"});
  const auto result = debit_against(server.base_url());
  ASSERT_TRUE(std::holds_alternative<domain::Debited>(result));
  EXPECT_EQ(std::get<domain::Debited>(result).debit_ref, "DBT-0000000001");
  EXPECT_FALSE(std::get<domain::Debited>(result).replayed);
}

TEST_F(CoreBankingClientTest, OkIsAReplayOfTheOriginalDebit) {
  ScriptedBankServer server(Reply{200, R"({"debitId":"DBT-0000000001","extra":[1,2]})"});
  const auto result = debit_against(server.base_url());
  ASSERT_TRUE(std::holds_alternative<domain::Debited>(result));
  EXPECT_EQ(std::get<domain::Debited>(result).debit_ref, "DBT-0000000001");
  EXPECT_TRUE(std::get<domain::Debited>(result).replayed);
}

TEST_F(CoreBankingClientTest, ConflictIsAFinalRejection) {
  ScriptedBankServer server(Reply{409, R"({"code":"SOMETHING_ELSE"})"});
  EXPECT_EQ(rejected_code(debit_against(server.base_url())), "IDEMPOTENCY_KEY_CONFLICT");
}

TEST_F(CoreBankingClientTest, UnprocessableCarriesTheBanksCode) {
  for (const char* code : {"INSUFFICIENT_FUNDS", "ACCOUNT_CLOSED", "ACCOUNT_NOT_FOUND", "E42"}) {
    ScriptedBankServer server(Reply{422, nlohmann::json({{"code", code}}).dump()});
    EXPECT_EQ(rejected_code(debit_against(server.base_url())), code);
  }
}

TEST_F(CoreBankingClientTest, UnprocessableWithAHostileOrMissingCodeIsUnprocessable) {
  const std::string hostile_bodies[] = {
      R"({"code":"insufficient_funds"})",
      R"({"code":"INSUFFICIENT FUNDS"})",
      R"({"code":"A\nB"})",
      R"({"code":"<script>alert(1)</script>"})",
      R"({"code":"ACC-0012345678"})",
      nlohmann::json({{"code", std::string(65, 'A')}}).dump(),
      R"({"code":""})",
      R"({"code":42})",
      R"({"code":null})",
      R"({"code":["INSUFFICIENT_FUNDS"]})",
      R"({"detail":"no code"})",
      R"(["INSUFFICIENT_FUNDS"])",
      "INSUFFICIENT_FUNDS",
      "",
  };
  for (const auto& body : hostile_bodies) {
    ScriptedBankServer server(Reply{422, body});
    EXPECT_EQ(rejected_code(debit_against(server.base_url())), "UNPROCESSABLE") << body;
  }
}

TEST_F(CoreBankingClientTest, ServerErrorsAndThrottlingAreTransient) {
  for (int status : {500, 502, 503, 504, 599, 429, 408}) {
    ScriptedBankServer server(Reply{status, R"({"code":"TRANSIENT_FAILURE"})"});
    const std::string detail = unavailable_detail(debit_against(server.base_url()));
    EXPECT_THAT(detail, HasSubstr("bank unavailable")) << status;
    EXPECT_THAT(detail, HasSubstr("HTTP " + std::to_string(status) + " TRANSIENT_FAILURE"));
  }
}

TEST_F(CoreBankingClientTest, OtherClientErrorsAreOurFaultAndNeverFinal) {
  for (int status : {400, 401, 403, 404, 405, 410, 413, 415, 301, 302}) {
    ScriptedBankServer server(
        Reply{status, R"({"code":"MALFORMED_REQUEST","detail":"missing Idempotency-Key"})"});
    const std::string detail = misconfigured_detail(debit_against(server.base_url()));
    EXPECT_THAT(detail, HasSubstr("bank answered HTTP " + std::to_string(status) +
                                  " MALFORMED_REQUEST: missing Idempotency-Key"));
  }
}

TEST_F(CoreBankingClientTest, SuccessWithoutAValidDebitIdIsNeverTakenForADebit) {
  const std::string bodies[] = {
      "",
      "not json",
      "{",
      "{}",
      "[]",
      R"({"debitId":""})",
      R"({"debitId":12345})",
      R"({"debitId":null})",
      R"({"debitId":"DBT 1"})",
      R"({"debitId":"DBT-1\n{\"level\":\"info\"}"})",
      nlohmann::json({{"debitId", std::string(129, 'D')}}).dump(),
      R"({"id":"DBT-1"})",
  };
  for (int status : {200, 201}) {
    for (const auto& body : bodies) {
      ScriptedBankServer server(Reply{status, body});
      EXPECT_THAT(unavailable_detail(debit_against(server.base_url())),
                  HasSubstr("without a valid debitId"))
          << status << " " << body;
    }
  }
}

TEST_F(CoreBankingClientTest, OtherSuccessStatusesLeaveTheOutcomeUnknown) {
  for (int status : {202, 204}) {
    ScriptedBankServer server(Reply{status, status == 204 ? "" : R"({"debitId":"DBT-1"})"});
    EXPECT_THAT(unavailable_detail(debit_against(server.base_url())), HasSubstr("outcome unknown"))
        << status;
  }
}

TEST_F(CoreBankingClientTest, ATimeoutAfterSendingIsTransientAndSaysTheOutcomeIsUnknown) {
  ScriptedBankServer server(Reply{201, R"({"debitId":"DBT-1"})", /*hold_until_shutdown=*/true});
  const std::string detail =
      unavailable_detail(debit_against(server.base_url(), {.connect = 200ms, .total = 300ms}));
  EXPECT_THAT(detail, HasSubstr("timed out after the request was sent (outcome unknown)"));
  EXPECT_EQ(server.requests().size(), 1u);
}

TEST_F(CoreBankingClientTest, ARefusedConnectionIsTransient) {
  BoundSocket refusing;
  EXPECT_THAT(unavailable_detail(debit_against(refusing.url())),
              HasSubstr("connection failed (request not sent)"));
}

TEST_F(CoreBankingClientTest, AKeyThatCouldRewriteTheRequestIsNeverSent) {
  ScriptedBankServer server(Reply{201, R"({"debitId":"DBT-1"})"});
  for (const std::string& key : {std::string(), std::string("CHG-1\r\nX-Evil: 1"),
                                 std::string("CHG 1"), std::string(257, 'K')}) {
    EXPECT_THAT(misconfigured_detail(debit_against(server.base_url(), kTimeouts, key)),
                HasSubstr("invalid idempotency key"));
  }
  EXPECT_TRUE(server.requests().empty());
}

// The bank echoes our request (account number included) in every field it could; whatever
// the status, the detail we hand to logs and the DLQ must show the account masked or not at all.
TEST_F(CoreBankingClientTest, NoDetailEverContainsTheFullAccountNumber) {
  for (int status : {200, 201, 202, 400, 401, 404, 429, 500, 503}) {
    ScriptedBankServer server([status](const httplib::Request& request) {
      return Reply{status, nlohmann::json({{"code", "ECHO"},
                                           {"detail", "rejected " + request.body},
                                           {"message", request.body},
                                           {"debitId", request.body}})
                               .dump()};
    });
    const auto result = debit_against(server.base_url());
    const bool misconfigured = status == 400 || status == 401 || status == 404;
    const std::string detail =
        misconfigured ? misconfigured_detail(result) : unavailable_detail(result);
    EXPECT_THAT(detail, Not(HasSubstr(kAccount))) << status;
    EXPECT_THAT(detail, Not(HasSubstr("0012345678"))) << status;
    EXPECT_THAT(detail, HasSubstr(kMaskedAccount)) << status << ": " << detail;
  }
}

TEST_F(CoreBankingClientTest, TheBanksExplanationIsBoundedAndPrintable) {
  ScriptedBankServer server(
      Reply{503, nlohmann::json({{"detail", "line1\nline2\x01" + std::string(500, 'x')}}).dump()});
  const std::string detail = unavailable_detail(debit_against(server.base_url()));
  EXPECT_THAT(detail, HasSubstr("line1?line2?xxx"));
  EXPECT_LT(detail.size(), 300u);
  EXPECT_TRUE(std::ranges::all_of(detail, [](char c) { return c >= ' ' && c <= '~'; }));
}

// Several debits in flight at once on each loop, and several loops (threads) sharing the client.
TEST_F(CoreBankingClientTest, ConcurrentDebitsEachGetTheirOwnAnswer) {
  ScriptedBankServer server([](const httplib::Request& request) {
    return Reply{
        201,
        nlohmann::json({{"debitId", "DBT-" + request.get_header_value("Idempotency-Key")}}).dump()};
  });
  auto client = client_for<CoreBankingClient>(server.base_url());
  // Six in flight at most, as before: the scripted server has eight threads and a listen
  // backlog of five.
  constexpr int kLoops = 2, kTasksPerLoop = 3, kDebitsPerTask = 15;
  std::atomic<int> mismatches{0};
  auto debits = [&](std::string prefix, int& running) -> Task<void> {
    for (int i = 0; i < kDebitsPerTask; ++i) {
      const std::string id = prefix + "-" + std::to_string(i);
      const domain::Charge charge = make_charge(id);
      const auto result = co_await client.debit(charge, id);
      const auto* debited = std::get_if<domain::Debited>(&result);
      if (debited == nullptr || debited->debit_ref != "DBT-" + id) ++mismatches;
    }
    --running;
  };
  std::vector<std::thread> loops;
  for (int l = 0; l < kLoops; ++l) {
    loops.emplace_back([&, l] {
      event::EventLoop loop;
      int running = kTasksPerLoop;
      loop.post([&] {
        for (int t = 0; t < kTasksPerLoop; ++t) {
          spawn(debits("CHG-" + std::to_string(l) + "-" + std::to_string(t), running));
        }
      });
      loop.run_until([&] { return running == 0; });
    });
  }
  for (auto& thread : loops) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
  EXPECT_EQ(server.requests().size(),
            static_cast<std::size_t>(kLoops * kTasksPerLoop * kDebitsPerTask));
}

// The status inquiry (docs/design.md §5, GET /v1/debits/{idempotencyKey}).
class DebitInquiryTest : public CoreBankingClientTest {
 protected:
  domain::InquiryResult ask(const std::string& base_url, std::string_view key = "CHG-1") {
    return event::run_blocking(client_for<CoreBankingClient>(base_url).find_debit(key));
  }
};

TEST_F(DebitInquiryTest, GetsTheDebitByItsKeyAndReadsItsId) {
  ScriptedBankServer server(Reply{200, R"({"debitId":"DBT-7","chargeId":"CHG-1"})"});
  const auto found = ask(server.base_url() + "/core");
  ASSERT_TRUE(std::holds_alternative<domain::DebitFound>(found));
  EXPECT_EQ(std::get<domain::DebitFound>(found).debit_ref, "DBT-7");
  const auto requests = server.requests();
  ASSERT_EQ(requests.size(), 1u);
  EXPECT_EQ(requests[0].method, "GET");
  EXPECT_EQ(requests[0].path, "/core/v1/debits/CHG-1");
  EXPECT_EQ(requests[0].body, "");
}

TEST_F(DebitInquiryTest, NotFoundIsTheBanksNoAndAnythingElseIsNoAnswer) {
  ScriptedBankServer missing(Reply{404, R"({"code":"DEBIT_NOT_FOUND"})"});
  EXPECT_TRUE(std::holds_alternative<domain::DebitNotFound>(ask(missing.base_url())));
  for (const Reply& reply : {Reply{503, R"({"code":"TRANSIENT_FAILURE"})"}, Reply{200, R"({})"},
                             Reply{200, R"({"debitId":"has space"})"}, Reply{401, ""}}) {
    ScriptedBankServer server(reply);
    EXPECT_TRUE(std::holds_alternative<domain::InquiryFailed>(ask(server.base_url())))
        << reply.status;
  }
  ScriptedBankServer unused(Reply{200, R"({"debitId":"DBT-7"})"});
  EXPECT_TRUE(std::holds_alternative<domain::InquiryFailed>(ask(unused.base_url(), "bad\r\nkey")));
  EXPECT_TRUE(unused.requests().empty()) << "a key that could rewrite the request is never sent";
}

}  // namespace
}  // namespace ic::bank
