// The guard of the bank's idempotency window (docs/design.md §3, "The bank's memory of keys"): a
// debit an earlier attempt may have made is asked about first, and never sent again past the
// window.
#include <gmock/gmock.h>

#include "application/debit_horizon.hpp"
#include "domain/charge_status.hpp"
#include "testing/service_fixture.hpp"

namespace ic::testing {
namespace {

using std::chrono::hours;

// The status inquiry: answers `answer` and counts the calls.
class ScriptedInquiry final : public domain::DebitInquiryPort {
 public:
  Task<domain::InquiryResult> find_debit(std::string_view) override {
    ++calls;
    co_return answer;
  }
  domain::InquiryResult answer = domain::DebitNotFound{};
  int calls = 0;
};

class BankHorizonTest : public ServiceFixture {
 protected:
  consumer::Disposition deliver_guarded(const application::BankHorizon& horizon) {
    application::ChargeRecoveryService guarded(
        store, bank, notifier, clock, tokens, observer, waiter,
        {.lease = kLease, .owner = "test-worker", .horizon = horizon});
    const application::Delivery delivery{.charge = charge, .payload_hash = "hash-1"};
    return event::run_on(loop, guarded.handle(delivery, heartbeat));
  }
  // The first attempt timed out after it was sent: the claim was released, the outcome unknown.
  void first_attempt_ends_ambiguously(const application::BankHorizon& horizon) {
    bank.script(charge.id.value(), {domain::DebitUnavailable{.detail = "timed out after send"}});
    ASSERT_TRUE(std::holds_alternative<consumer::RetryLater>(deliver_guarded(horizon)));
    ASSERT_EQ(bank.calls(), 1);
  }

  ScriptedInquiry inquiry;
};

TEST(DebitHorizon, TheMarginIsATenthOfTheWindow) {
  const application::BankHorizon day{.window = hours(24)};
  EXPECT_EQ(application::safety_margin(day), Millis{hours(24)} / 10);
  const Instant t0{};
  EXPECT_FALSE(application::past_window(day, t0, t0 + hours(21)));
  EXPECT_TRUE(application::past_window(day, t0, t0 + hours(22)));
  const application::BankHorizon short_window{.window = 5s};
  EXPECT_FALSE(application::past_window(short_window, t0, t0 + 4s));
  EXPECT_TRUE(application::past_window(short_window, t0, t0 + 4500ms));
  const application::BankHorizon forever{.window = std::nullopt};
  EXPECT_FALSE(application::past_window(forever, t0, t0 + hours(24 * 3650)));
}

TEST_F(BankHorizonTest, AFirstDeliveryAsksNothing) {
  EXPECT_TRUE(is_ack(deliver_guarded({.inquiry = &inquiry})));
  EXPECT_EQ(inquiry.calls, 0);
  EXPECT_EQ(bank.calls(), 1);
  EXPECT_EQ(record().first_attempt_at, record().created_at);
}

TEST_F(BankHorizonTest, AfterAnAmbiguousEndAFoundDebitIsRecordedDoneWithoutASecondPost) {
  const application::BankHorizon horizon{.inquiry = &inquiry};
  first_attempt_ends_ambiguously(horizon);
  inquiry.answer = domain::DebitFound{"DBT-FROM-INQUIRY"};
  clock.advance(5s);
  EXPECT_TRUE(is_ack(deliver_guarded(horizon)));
  EXPECT_EQ(inquiry.calls, 1);
  EXPECT_EQ(bank.calls(), 1) << "no second POST";
  const idempotency::ClaimRecord r = record();
  EXPECT_EQ(r.state, idempotency::ClaimState::Done);
  EXPECT_EQ(r.status, "DEBITED");
  EXPECT_EQ(r.result_ref, "DBT-FROM-INQUIRY");
  EXPECT_THAT(notifier.keys(), ::testing::ElementsAre(charge.id.value() + ":notify"));
}

TEST_F(BankHorizonTest, NotFoundInsideTheWindowPostsAsBefore) {
  const application::BankHorizon horizon{.inquiry = &inquiry};
  first_attempt_ends_ambiguously(horizon);
  clock.advance(hours(1));
  EXPECT_TRUE(is_ack(deliver_guarded(horizon)));
  EXPECT_EQ(inquiry.calls, 1);
  EXPECT_EQ(bank.calls(), 2);
  EXPECT_EQ(record().status, "DEBITED");
}

TEST_F(BankHorizonTest, PastTheWindowANotFoundDebitIsNeverSentAgainButEndsDebitUncertain) {
  const application::BankHorizon horizon{.window = hours(1), .inquiry = &inquiry};
  first_attempt_ends_ambiguously(horizon);
  clock.advance(hours(2));
  const consumer::Disposition d = deliver_guarded(horizon);
  const auto* dead = std::get_if<consumer::DeadLetter>(&d);
  ASSERT_NE(dead, nullptr);
  EXPECT_EQ(dead->reason, domain::dlq_reason::kDebitUncertain);
  EXPECT_THAT(dead->detail, ::testing::HasSubstr("7200 s ago"));
  EXPECT_EQ(bank.calls(), 1);
  const idempotency::ClaimRecord r = record();
  EXPECT_EQ(r.state, idempotency::ClaimState::Failed);
  EXPECT_EQ(r.status, "DEBIT_UNCERTAIN");
  EXPECT_EQ(r.failure_reason, "DEBIT_UNCERTAIN");
  // A redelivery finds it final, as any failure.
  const consumer::Disposition again = deliver_guarded(horizon);
  ASSERT_TRUE(std::holds_alternative<consumer::DeadLetter>(again));
  EXPECT_EQ(std::get<consumer::DeadLetter>(again).reason, domain::dlq_reason::kPreviouslyFailed);
  EXPECT_EQ(bank.calls(), 1);
}

TEST_F(BankHorizonTest, WithoutTheInquiryPastTheWindowEndsDebitUncertain) {
  const application::BankHorizon horizon{.window = hours(1)};
  first_attempt_ends_ambiguously(horizon);
  clock.advance(hours(1));
  EXPECT_TRUE(std::holds_alternative<consumer::DeadLetter>(deliver_guarded(horizon)));
  EXPECT_EQ(bank.calls(), 1);
  EXPECT_EQ(record().status, "DEBIT_UNCERTAIN");
}

TEST_F(BankHorizonTest, PastTheWindowAFoundDebitIsStillRecordedDone) {
  const application::BankHorizon horizon{.window = hours(1), .inquiry = &inquiry};
  first_attempt_ends_ambiguously(horizon);
  inquiry.answer = domain::DebitFound{"DBT-LATE"};
  clock.advance(hours(3));
  EXPECT_TRUE(is_ack(deliver_guarded(horizon)));
  EXPECT_EQ(record().result_ref, "DBT-LATE");
  EXPECT_EQ(bank.calls(), 1);
}

TEST_F(BankHorizonTest, AnUnansweredInquiryPastTheWindowEndsDebitUncertain) {
  const application::BankHorizon horizon{.window = hours(1), .inquiry = &inquiry};
  first_attempt_ends_ambiguously(horizon);
  inquiry.answer = domain::InquiryFailed{"HTTP 503"};
  clock.advance(hours(2));
  EXPECT_TRUE(std::holds_alternative<consumer::DeadLetter>(deliver_guarded(horizon)));
  EXPECT_EQ(bank.calls(), 1);
}

TEST_F(BankHorizonTest, AHolderThatVanishedCountsFromTheFirstClaim) {
  // A worker claimed (and may have debited) then died: nothing released the claim.
  ASSERT_EQ(event::run_blocking(store.claim({.key = charge.id.value(),
                                             .payload_hash = "hash-1",
                                             .token = "vanished",
                                             .owner = "dead-worker",
                                             .now = clock.now(),
                                             .lease = kLease}))
                ->outcome,
            idempotency::ClaimOutcome::Acquired);
  clock.advance(hours(2));
  EXPECT_TRUE(std::holds_alternative<consumer::DeadLetter>(deliver_guarded({.window = hours(1)})));
  EXPECT_EQ(bank.calls(), 0);
}

TEST_F(BankHorizonTest, ABankThatNeverForgetsIsRetriedAtAnyAge) {
  const application::BankHorizon horizon{.window = std::nullopt};
  first_attempt_ends_ambiguously(horizon);
  clock.advance(hours(24 * 20));
  EXPECT_TRUE(is_ack(deliver_guarded(horizon)));
  EXPECT_EQ(bank.calls(), 2);
}

}  // namespace
}  // namespace ic::testing
