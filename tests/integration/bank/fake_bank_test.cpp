// Both bank adapters against the real fake bank (tools/fake_bank, docs/design.md §5): the strict
// request parser accepts what we send, and every mapping holds against the server the
// end-to-end tests use, including the commit-then-timeout crash window.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <stdexcept>

#include "adapters/bank/core_banking_client.hpp"
#include "adapters/bank/notification_client.hpp"
#include "event/event_loop.hpp"
#include "event/run_blocking.hpp"
#include "http/curl_transport.hpp"
#include "testing/fake_bank_process.hpp"
#include "testing/fakes.hpp"

namespace ic::bank {
namespace {

using namespace std::chrono_literals;
using ic::testing::make_charge;
using ic::testing::shared_fake_bank;
using ::testing::HasSubstr;

const http::HttpTimeouts kTimeouts{.connect = 1s, .total = 5s};
// Shorter than the fake bank's withheld reply (2 s), so the debit commits and we time out.
const http::HttpTimeouts kImpatient{.connect = 300ms, .total = 300ms};

class FakeBankSystemTest : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(shared_fake_bank().reset()); }

  static BankEndpoint endpoint(http::HttpTimeouts timeouts = kTimeouts) {
    auto created = BankEndpoint::create(shared_fake_bank().base_url(), timeouts);
    if (!created) throw std::invalid_argument(created.error());
    return *std::move(created);
  }

  static domain::Debited expect_debited(const domain::DebitResult& result) {
    const auto* debited = std::get_if<domain::Debited>(&result);
    EXPECT_NE(debited, nullptr) << "not Debited: " << describe(result);
    return debited == nullptr ? domain::Debited{} : *debited;
  }

  static std::string describe(const domain::DebitResult& result) {
    if (const auto* r = std::get_if<domain::DebitRejected>(&result)) return "rejected " + r->code;
    if (const auto* u = std::get_if<domain::DebitUnavailable>(&result)) return u->detail;
    if (const auto* m = std::get_if<domain::DebitMisconfigured>(&result)) {
      return "misconfigured " + m->detail;
    }
    return "debited";
  }

  // The debit on a loop made for it, which has no connection yet (a loop keeps its own).
  static domain::DebitResult on_a_fresh_loop(CoreBankingClient& bank, const domain::Charge& charge,
                                             const std::string& key) {
    event::EventLoop loop;
    std::optional<domain::DebitResult> result;
    auto attempt = [&]() -> Task<void> { result = co_await bank.debit(charge, key); };
    loop.post([&] { spawn(attempt()); });
    loop.run_until([&] { return result.has_value(); });
    return *std::move(result);
  }

  http::CurlTransport transport_;
};

TEST_F(FakeBankSystemTest, FirstDebitIsCreatedAndARetryReplaysTheSameDebit) {
  CoreBankingClient bank(transport_, endpoint());
  const auto charge = make_charge("CHG-SYS-1");
  const domain::Debited first =
      expect_debited(event::run_blocking(bank.debit(charge, "CHG-SYS-1")));
  EXPECT_FALSE(first.replayed);
  EXPECT_THAT(first.debit_ref, ::testing::StartsWith("DBT-"));
  const domain::Debited replay =
      expect_debited(event::run_blocking(bank.debit(charge, "CHG-SYS-1")));
  EXPECT_TRUE(replay.replayed);
  EXPECT_EQ(replay.debit_ref, first.debit_ref);

  const auto ledger = shared_fake_bank().ledger();
  ASSERT_TRUE(ledger);
  ASSERT_EQ((*ledger)["debits"].size(), 1u);
  const auto& entry = (*ledger)["debits"][0];
  EXPECT_EQ(entry["debitId"], first.debit_ref);
  EXPECT_EQ(entry["replays"], 1);
  EXPECT_EQ(entry["accountId"], "ACC-0012345678");
  EXPECT_EQ(entry["amountMinor"], 2500);
  EXPECT_EQ(entry["currency"], "INR");
  EXPECT_EQ(entry["chargeType"], "SMS_ALERT_FEE");
}

TEST_F(FakeBankSystemTest, AFailingAccountPrefixIsAFinalRejectionWithTheBanksCode) {
  ASSERT_TRUE(shared_fake_bank().set_faults(
      R"({"permanentFailures":{"ACC-9":"INSUFFICIENT_FUNDS","ACC-8":"ACCOUNT_CLOSED"}})"));
  CoreBankingClient bank(transport_, endpoint());
  const auto poor = event::run_blocking(
      bank.debit(make_charge("CHG-SYS-2", 2500, "ACC-9000000001"), "CHG-SYS-2"));
  ASSERT_TRUE(std::holds_alternative<domain::DebitRejected>(poor)) << describe(poor);
  EXPECT_EQ(std::get<domain::DebitRejected>(poor).code, "INSUFFICIENT_FUNDS");
  const auto closed = event::run_blocking(
      bank.debit(make_charge("CHG-SYS-3", 2500, "ACC-8000000001"), "CHG-SYS-3"));
  ASSERT_TRUE(std::holds_alternative<domain::DebitRejected>(closed)) << describe(closed);
  EXPECT_EQ(std::get<domain::DebitRejected>(closed).code, "ACCOUNT_CLOSED");
  EXPECT_TRUE((*shared_fake_bank().ledger())["debits"].empty());
}

TEST_F(FakeBankSystemTest, TheSameKeyWithAnotherAmountIsAConflict) {
  CoreBankingClient bank(transport_, endpoint());
  expect_debited(event::run_blocking(bank.debit(make_charge("CHG-SYS-4", 2500), "CHG-SYS-4")));
  const auto conflict =
      event::run_blocking(bank.debit(make_charge("CHG-SYS-4", 9900), "CHG-SYS-4"));
  ASSERT_TRUE(std::holds_alternative<domain::DebitRejected>(conflict)) << describe(conflict);
  EXPECT_EQ(std::get<domain::DebitRejected>(conflict).code, "IDEMPOTENCY_KEY_CONFLICT");
}

TEST_F(FakeBankSystemTest, InjectedServerErrorsAreTransient) {
  ASSERT_TRUE(shared_fake_bank().set_faults(R"({"transientErrorRate":1.0})"));
  CoreBankingClient bank(transport_, endpoint());
  const auto result = event::run_blocking(bank.debit(make_charge("CHG-SYS-5"), "CHG-SYS-5"));
  ASSERT_TRUE(std::holds_alternative<domain::DebitUnavailable>(result)) << describe(result);
  EXPECT_THAT(describe(result), HasSubstr("HTTP 503 TRANSIENT_FAILURE"));
}

TEST_F(FakeBankSystemTest, AKeyThatIsNotTheChargeIdIsAClientErrorNeverAFinalFailure) {
  CoreBankingClient bank(transport_, endpoint());
  const auto result = event::run_blocking(bank.debit(make_charge("CHG-SYS-6"), "some-other-key"));
  ASSERT_TRUE(std::holds_alternative<domain::DebitMisconfigured>(result)) << describe(result);
  EXPECT_THAT(describe(result), HasSubstr("HTTP 400 MALFORMED_REQUEST"));
}

// docs/design.md §2's crash window: the bank commits, the answer never arrives in time; the retry
// with the same key learns the original debit and no second debit exists.
TEST_F(FakeBankSystemTest, ADebitCommittedBehindATimeoutIsReturnedByTheRetry) {
  for (const char* mode : {"delay", "close"}) {
    ASSERT_TRUE(shared_fake_bank().reset());
    const std::string id = std::string("CHG-SYS-CTT-") + mode;
    ASSERT_TRUE(
        shared_fake_bank().set_faults(std::string(R"({"commitThenTimeout":{"chargeIds":[")") + id +
                                      R"("],"delayMs":2000,"mode":")" + mode + R"("}})"));
    const auto charge = make_charge(id);
    // A fresh connection: on a reused one curl itself re-sends a request whose connection
    // died before any answer, and the bank's replay would hide the lost reply from this test.
    // Connections belong to a loop, so the attempt gets a loop of its own.
    CoreBankingClient impatient(transport_, endpoint(kImpatient));
    const auto lost = on_a_fresh_loop(impatient, charge, id);
    ASSERT_TRUE(std::holds_alternative<domain::DebitUnavailable>(lost))
        << mode << ": " << describe(lost);
    EXPECT_THAT(describe(lost), HasSubstr("outcome unknown")) << mode;

    CoreBankingClient bank(transport_, endpoint());
    const domain::Debited retry = expect_debited(event::run_blocking(bank.debit(charge, id)));
    EXPECT_TRUE(retry.replayed) << mode;
    const auto ledger = shared_fake_bank().ledger();
    ASSERT_TRUE(ledger);
    ASSERT_EQ((*ledger)["debits"].size(), 1u) << mode;
    EXPECT_EQ((*ledger)["debits"][0]["debitId"], retry.debit_ref) << mode;
  }
}

TEST_F(FakeBankSystemTest, NotificationIsSentOnceUnderItsKey) {
  NotificationClient notifier(transport_, endpoint());
  const auto charge = make_charge("CHG-SYS-7");
  ASSERT_TRUE(std::holds_alternative<domain::NotificationSent>(
      event::run_blocking(notifier.notify(charge, "DBT-0000000042", "CHG-SYS-7:notify"))));
  const auto ledger = shared_fake_bank().ledger();
  ASSERT_TRUE(ledger);
  ASSERT_EQ((*ledger)["notifications"].size(), 1u);
  EXPECT_EQ((*ledger)["notifications"][0]["key"], "CHG-SYS-7:notify");
  EXPECT_EQ((*ledger)["notifications"][0]["debitId"], "DBT-0000000042");
}

TEST_F(FakeBankSystemTest, InjectedNotificationFailureIsReported) {
  ASSERT_TRUE(shared_fake_bank().set_faults(R"({"notificationFailureRate":1.0})"));
  NotificationClient notifier(transport_, endpoint());
  const auto result =
      event::run_blocking(notifier.notify(make_charge("CHG-SYS-8"), "DBT-1", "CHG-SYS-8:notify"));
  const auto* failed = std::get_if<domain::NotificationFailed>(&result);
  ASSERT_NE(failed, nullptr);
  EXPECT_THAT(failed->detail, HasSubstr("HTTP 503 NOTIFICATION_UNAVAILABLE"));
  EXPECT_TRUE((*shared_fake_bank().ledger())["notifications"].empty());
}

}  // namespace
}  // namespace ic::bank
