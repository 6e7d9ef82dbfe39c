// Telemetry's reading of typed outcomes: store operations and error classes become today's
// label values, ambiguity is a log field, and a misconfigured debit is counted on its own.
#include "app/telemetry/telemetry.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "app/build_info.hpp"
#include "testing/clocks.hpp"
#include "testing/fakes.hpp"

namespace ic::app {
namespace {

using ::testing::HasSubstr;

class TelemetryTest : public ::testing::Test {
 protected:
  // What the logger wrote so far (it writes on its own thread).
  [[nodiscard]] std::string logged() {
    EXPECT_TRUE(log_.flush(Millis{10'000}));
    return out_.str();
  }
  [[nodiscard]] nlohmann::json last_line() {
    std::string line;
    std::istringstream lines(logged());
    for (std::string next; std::getline(lines, next);) line = next;
    return nlohmann::json::parse(line);
  }

  [[nodiscard]] std::vector<nlohmann::json> lines_with(std::string_view msg) {
    std::vector<nlohmann::json> found;
    std::istringstream lines(logged());
    for (std::string next; std::getline(lines, next);) {
      auto line = nlohmann::json::parse(next);
      if (line["msg"] == msg) found.push_back(std::move(line));
    }
    return found;
  }

  std::ostringstream out_;
  observability::Logger log_{*observability::parse_log_level("debug"),
                             observability::ostream_sink(out_)};
  observability::MetricsRegistry metrics_;
  Telemetry telemetry_{log_, metrics_};
  const domain::Charge charge_ = testing::make_charge();
  testing::ManualClock clock_;
  observability::Readiness readiness_{
      clock_,
      {{.name = "receive", .failures_to_down = 2, .up_until_proven = true},
       {.name = "store", .failures_to_down = 2, .up_until_proven = true}},
      &telemetry_.health};
};

TEST_F(TelemetryTest, ReceivesAndStoreCallsFeedReadinessAndItsGauges) {
  telemetry_.feed(readiness_);
  telemetry_.health.on_readiness(readiness_.statuses(), readiness_.ready());  // as RunHealth does
  EXPECT_THAT(metrics_.render(), HasSubstr("ic_ready 1"));
  EXPECT_TRUE(logged().empty()) << "the initial state sets the gauges without a log line";
  const Error denied{.error_class = ErrorClass::Permanent, .code = "AccessDenied"};
  telemetry_.listener.on_receive_error(denied, Millis{100});
  telemetry_.listener.on_receive_error(denied, Millis{200});
  EXPECT_FALSE(readiness_.ready());
  EXPECT_THAT(metrics_.render(), HasSubstr(R"(ic_dependency_up{dependency="receive"} 0)"));
  EXPECT_EQ(last_line()["msg"], "not ready");
  EXPECT_EQ(lines_with("dependency down").size(), 1u);
  EXPECT_EQ(lines_with("dependency down")[0]["dependency"], "receive");
  EXPECT_EQ(lines_with("dependency down")[0]["code"], "AccessDenied");
  telemetry_.listener.on_received(0);  // an empty poll proves the queue answers
  EXPECT_TRUE(readiness_.ready());
  const std::string text = metrics_.render();
  EXPECT_THAT(text, HasSubstr(R"(ic_dependency_up{dependency="receive"} 1)"));
  EXPECT_THAT(text, HasSubstr("ic_ready 1"));
  EXPECT_EQ(last_line()["msg"], "ready");
  EXPECT_EQ(lines_with("dependency up").size(), 1u) << "only the dependency that changed";

  const Error timeout{.code = "TimeoutAfterSend"};
  telemetry_.charges.store_failed(charge_, idempotency::StoreOperation::Claim, timeout);
  EXPECT_TRUE(readiness_.ready()) << "one failed store call is within the grace";
  telemetry_.charges.store_failed(charge_, idempotency::StoreOperation::Release, timeout);
  EXPECT_FALSE(readiness_.ready()) << "two in a row, of any operation, say the store is down";
  EXPECT_THAT(metrics_.render(), HasSubstr(R"(ic_dependency_up{dependency="store"} 0)"));
  telemetry_.charges.fenced(charge_, idempotency::StoreOperation::Complete, "token-a");
  EXPECT_TRUE(readiness_.ready()) << "a refused write is still an answer";
}

TEST_F(TelemetryTest, QueueDepthsBecomeGaugesByQueueAndState) {
  telemetry_.health.queue_depth("source", {.visible = 12, .in_flight = 3, .delayed = 0});
  telemetry_.health.queue_depth("dlq", {.visible = 2});
  const std::string text = metrics_.render();
  EXPECT_THAT(text, HasSubstr(R"(ic_queue_messages{queue="source",state="visible"} 12)"));
  EXPECT_THAT(text, HasSubstr(R"(ic_queue_messages{queue="source",state="in_flight"} 3)"));
  EXPECT_THAT(text, HasSubstr(R"(ic_queue_messages{queue="source",state="delayed"} 0)"));
  EXPECT_THAT(text, HasSubstr(R"(ic_queue_messages{queue="dlq",state="visible"} 2)"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr(R"(queue="dlq",state="in_flight")")))
      << "an attribute the reply did not carry is not made up";
}

TEST_F(TelemetryTest, AThreadExceptionIsCountedByThreadAndLoggedOnce) {
  telemetry_.listener.on_thread_exception("receiver", "reply decoder bug");
  EXPECT_THAT(metrics_.render(), HasSubstr(R"(ic_thread_exceptions_total{thread="receiver"} 1)"));
  const auto line = last_line();
  EXPECT_EQ(line["level"], "error");
  EXPECT_EQ(line["thread"], "receiver");
  EXPECT_EQ(line["detail"], "reply decoder bug");
}

TEST_F(TelemetryTest, AStoreFailureIsLabelledByOperationAndClassAndLogsTheAmbiguity) {
  telemetry_.charges.store_failed(charge_, idempotency::StoreOperation::Claim,
                                  {.error_class = ErrorClass::Retryable,
                                   .code = "TimeoutAfterSend",
                                   .message = "timed out",
                                   .ambiguous = true});
  EXPECT_THAT(metrics_.render(),
              HasSubstr(R"(ic_store_errors_total{operation="claim",kind="retryable"} 1)"));
  const auto line = last_line();
  EXPECT_EQ(line["msg"], "idempotency store failed");
  EXPECT_EQ(line["operation"], "claim");
  EXPECT_EQ(line["kind"], "retryable");
  EXPECT_EQ(line["code"], "TimeoutAfterSend");
  EXPECT_EQ(line["detail"], "timed out");
  EXPECT_EQ(line["ambiguous"], true);

  telemetry_.charges.store_failed(charge_, idempotency::StoreOperation::Release,
                                  {.error_class = ErrorClass::Throttling, .code = "Throttled"});
  EXPECT_THAT(metrics_.render(),
              HasSubstr(R"(ic_store_errors_total{operation="release",kind="throttling"} 1)"));
  EXPECT_EQ(last_line()["ambiguous"], false);
}

TEST_F(TelemetryTest, FencedWritesAreLabelledByOperation) {
  telemetry_.charges.fenced(charge_, idempotency::StoreOperation::Complete, "token-a");
  telemetry_.charges.fenced(charge_, idempotency::StoreOperation::Fail, "token-b");
  const std::string text = metrics_.render();
  EXPECT_THAT(text, HasSubstr(R"(ic_fenced_total{operation="complete"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(ic_fenced_total{operation="fail"} 1)"));
  EXPECT_EQ(last_line()["claimToken"], "token-b")
      << "a history joins the fenced write to its claim";
}

TEST_F(TelemetryTest, AClaimAndTheFinalWriteNameTheClaimTokenAndLease) {
  idempotency::ClaimResult acquired{.outcome = idempotency::ClaimOutcome::Acquired};
  acquired.record.claim_token = "token-a";
  acquired.record.lease_until = Instant{Millis{1'700'000'060'000}};
  acquired.record.fence = 2;
  telemetry_.charges.claim_decided(charge_, acquired);
  auto line = last_line();
  EXPECT_EQ(line["msg"], "claim decided");
  EXPECT_EQ(line["claimToken"], "token-a");
  EXPECT_EQ(line["leaseUntil"], 1'700'000'060'000);
  EXPECT_EQ(line["fence"], 2);

  telemetry_.charges.recorded(charge_, idempotency::StoreOperation::Complete, "token-a");
  line = last_line();
  EXPECT_EQ(line["msg"], "recorded");
  EXPECT_EQ(line["claimToken"], "token-a");
  EXPECT_EQ(line["operation"], "complete");
}

// At info a charge writes one line, its outcome with ids and step timings (issue 34); the
// per-step lines are debug.
TEST_F(TelemetryTest, AtInfoADeliveryOfAChargeWritesOneLine) {
  log_.set_level(observability::LogLevel::Info);
  idempotency::ClaimResult acquired{.outcome = idempotency::ClaimOutcome::Acquired};
  acquired.record.claim_token = "token-a";
  acquired.record.fence = 2;
  const domain::Debited debited{.debit_ref = "DBT-1", .replayed = true};
  telemetry_.charges.claim_decided(charge_, acquired);
  telemetry_.charges.debit_finished(charge_, debited);
  telemetry_.charges.notification_finished(charge_, domain::NotificationSent{});
  telemetry_.charges.recorded(charge_, idempotency::StoreOperation::Complete, "token-a");
  const application::ChargeSteps steps{.claim = idempotency::ClaimOutcome::Acquired,
                                       .fence = 2,
                                       .debit = debited,
                                       .status = "DEBITED",
                                       .claim_time = Millis{4},
                                       .debit_time = Millis{120},
                                       .notify_time = Millis{30},
                                       .record_time = Millis{5}};
  telemetry_.charges.charge_finished(charge_, steps, consumer::Ack{});

  const std::string text = logged();
  EXPECT_EQ(std::ranges::count(text, '\n'), 1) << text;
  const auto line = last_line();
  EXPECT_EQ(line["level"], "info");
  EXPECT_EQ(line["msg"], "charge handled");
  EXPECT_EQ(line["chargeId"], charge_.id.value());
  EXPECT_EQ(line["outcome"], "ack");
  EXPECT_EQ(line["claim"], "ACQUIRED");
  EXPECT_EQ(line["fence"], 2);
  EXPECT_EQ(line["status"], "DEBITED");
  EXPECT_EQ(line["debitRef"], "DBT-1");
  EXPECT_EQ(line["replayed"], true);
  EXPECT_EQ(line["claimMs"], 4);
  EXPECT_EQ(line["debitMs"], 120);
  EXPECT_EQ(line["notifyMs"], 30);
  EXPECT_EQ(line["recordMs"], 5);
  EXPECT_EQ(line["accountId"], domain::masked(charge_.account));

  telemetry_.charges.charge_finished(charge_, {}, consumer::RetryLater{Millis{5}, "in_progress"});
  EXPECT_EQ(last_line()["outcome"], "retry_later");
  EXPECT_EQ(last_line()["reason"], "in_progress");
  EXPECT_EQ(last_line()["claim"], "");

  log_.set_level(observability::LogLevel::Debug);
  telemetry_.charges.claim_decided(charge_, acquired);
  EXPECT_EQ(last_line()["level"], "debug");
  EXPECT_EQ(last_line()["msg"], "claim decided");
}

TEST_F(TelemetryTest, AMisconfiguredDebitIsCountedApartFromAnUnavailableBank) {
  telemetry_.charges.debit_finished(charge_,
                                    domain::DebitUnavailable{"bank unavailable: HTTP 503"});
  telemetry_.charges.debit_finished(charge_, domain::DebitMisconfigured{"bank answered HTTP 400"});
  const std::string text = metrics_.render();
  EXPECT_THAT(text, HasSubstr(R"(ic_debits_total{result="unavailable"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(ic_debits_total{result="misconfigured"} 1)"));
  const auto line = last_line();
  EXPECT_EQ(line["level"], "error") << "an operator must fix the request or configuration";
  EXPECT_EQ(line["detail"], "bank answered HTTP 400");
}

TEST_F(TelemetryTest, MetricsNameTheBuildAndCarryTheProcessMetrics) {
  const std::string text = metrics_.render();
  EXPECT_THAT(text, HasSubstr(fmt::format(R"(ic_build_info{{version="{}",commit="{}"}} 1)",
                                          kVersion, kCommit)));
  for (const char* name : {"process_cpu_seconds_total", "process_resident_memory_bytes",
                           "process_virtual_memory_bytes", "process_start_time_seconds",
                           "process_open_fds", "process_max_fds"}) {
    EXPECT_THAT(text, HasSubstr(fmt::format("\n{} ", name))) << name;
  }
}

TEST_F(TelemetryTest, ProducerAttributesLeftOutOfADlqCopyAreLoggedAndCounted) {
  const std::vector<std::string> dropped{"p7", "p8"};
  telemetry_.listener.on_dlq_attributes_dropped("m-1", dropped);
  EXPECT_THAT(metrics_.render(), HasSubstr("ic_dlq_attributes_dropped_total 2"));
  const auto line = last_line();
  EXPECT_EQ(line["msg"], "producer attributes left out of the DLQ copy");
  EXPECT_EQ(line["messageId"], "m-1");
  EXPECT_EQ(line["count"], 2);
  EXPECT_EQ(line["attributes"], "p7,p8");
}

TEST_F(TelemetryTest, AQuarantineIsCountedEachTimeAndLoggedOncePerWindowAndReason) {
  ListenerTelemetry listener(log_, metrics_, clock_);
  const consumer::Message message{.message_id = "m-3", .body = std::string(262'144, 'x')};
  const consumer::QuarantineRecord record{.body_sha256 = "ab", .failure_reason = "INVALID_MESSAGE"};
  const std::string_view msg =
      "no DLQ copy can carry the reason; quarantined it, sending the body alone";
  listener.on_quarantined(message, record);
  listener.on_quarantined(message, record);
  EXPECT_THAT(metrics_.render(),
              HasSubstr(R"(ic_dlq_quarantined_total{reason="INVALID_MESSAGE"} 2)"));
  auto lines = lines_with(msg);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["messageId"], "m-3");
  EXPECT_EQ(lines[0]["reason"], "INVALID_MESSAGE");
  EXPECT_EQ(lines[0]["bodySha256"], "ab");
  EXPECT_EQ(lines[0]["bodyBytes"], 262'144);
  EXPECT_EQ(lines[0]["suppressed"], 0);

  clock_.advance(std::chrono::seconds{31});
  listener.on_quarantined(message, record);
  lines = lines_with(msg);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1]["suppressed"], 1);
}

TEST_F(TelemetryTest, ADeadLetterIsLoggedWithTheMessageAndTheDecision) {
  const consumer::Message message{.message_id = "m-2", .body = "{}", .receive_count = 3};
  telemetry_.listener.on_dead_letter(
      message, {.reason = "PAYLOAD_MISMATCH", .detail = "hash differs", .key = "CHG-1"});
  const auto line = last_line();
  EXPECT_EQ(line["level"], "warn");
  EXPECT_EQ(line["msg"], "dead-lettering");
  EXPECT_EQ(line["messageId"], "m-2");
  EXPECT_EQ(line["chargeId"], "CHG-1");
  EXPECT_EQ(line["failureReason"], "PAYLOAD_MISMATCH");
  EXPECT_EQ(line["failureDetail"], "hash differs");
  EXPECT_EQ(line["receiveCount"], 3);
}

TEST(StoreOperation, NamesAreTheMetricLabelValues) {
  EXPECT_EQ(idempotency::to_string(idempotency::StoreOperation::Claim), "claim");
  EXPECT_EQ(idempotency::to_string(idempotency::StoreOperation::Complete), "complete");
  EXPECT_EQ(idempotency::to_string(idempotency::StoreOperation::Fail), "fail");
  EXPECT_EQ(idempotency::to_string(idempotency::StoreOperation::Extend), "extend");
  EXPECT_EQ(idempotency::to_string(idempotency::StoreOperation::Release), "release");
  EXPECT_EQ(idempotency::to_string(idempotency::StoreOperation::Get), "get");
}

}  // namespace
}  // namespace ic::app
