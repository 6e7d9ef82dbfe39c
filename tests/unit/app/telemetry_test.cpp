// Telemetry's reading of typed outcomes: store operations and error classes become today's
// label values, ambiguity is a log field, and a misconfigured debit is counted on its own.
#include "app/telemetry.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "testing/fakes.hpp"

namespace ic::app {
namespace {

using ::testing::HasSubstr;

class TelemetryTest : public ::testing::Test {
 protected:
  [[nodiscard]] nlohmann::json last_line() const {
    std::string line;
    std::istringstream lines(out_.str());
    for (std::string next; std::getline(lines, next);) line = next;
    return nlohmann::json::parse(line);
  }

  std::ostringstream out_;
  obs::Logger log_{*obs::parse_log_level("debug"), obs::ostream_sink(out_)};
  obs::MetricsRegistry metrics_;
  Telemetry telemetry_{log_, metrics_};
  const charge::Charge charge_ = testing::make_charge();
};

TEST_F(TelemetryTest, AStoreFailureIsLabelledByOperationAndClassAndLogsTheAmbiguity) {
  telemetry_.table_answered(true);
  telemetry_.store_failed(charge_, idem::StoreOperation::Claim,
                          {.error_class = ErrorClass::Retryable,
                           .code = "TimeoutAfterSend",
                           .message = "timed out",
                           .ambiguous = true});
  EXPECT_FALSE(telemetry_.table_reachable()) << "a failed claim says the table is unreachable";
  EXPECT_THAT(metrics_.render(),
              HasSubstr(R"(ic_store_errors_total{operation="claim",kind="retryable"} 1)"));
  const auto line = last_line();
  EXPECT_EQ(line["msg"], "idempotency store failed");
  EXPECT_EQ(line["operation"], "claim");
  EXPECT_EQ(line["kind"], "retryable");
  EXPECT_EQ(line["code"], "TimeoutAfterSend");
  EXPECT_EQ(line["detail"], "timed out");
  EXPECT_EQ(line["ambiguous"], true);

  telemetry_.table_answered(true);
  telemetry_.store_failed(charge_, idem::StoreOperation::Release,
                          {.error_class = ErrorClass::Throttling, .code = "Throttled"});
  EXPECT_TRUE(telemetry_.table_reachable()) << "only a claim speaks for the table";
  EXPECT_THAT(metrics_.render(),
              HasSubstr(R"(ic_store_errors_total{operation="release",kind="throttling"} 1)"));
  EXPECT_EQ(last_line()["ambiguous"], false);
}

TEST_F(TelemetryTest, FencedWritesAreLabelledByOperation) {
  telemetry_.fenced(charge_, idem::StoreOperation::Complete);
  telemetry_.fenced(charge_, idem::StoreOperation::Fail);
  const std::string text = metrics_.render();
  EXPECT_THAT(text, HasSubstr(R"(ic_fenced_total{operation="complete"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(ic_fenced_total{operation="fail"} 1)"));
}

TEST_F(TelemetryTest, AMisconfiguredDebitIsCountedApartFromAnUnavailableBank) {
  telemetry_.debit_finished(charge_, charge::DebitUnavailable{"bank unavailable: HTTP 503"});
  telemetry_.debit_finished(charge_, charge::DebitMisconfigured{"bank answered HTTP 400"});
  const std::string text = metrics_.render();
  EXPECT_THAT(text, HasSubstr(R"(ic_debits_total{result="unavailable"} 1)"));
  EXPECT_THAT(text, HasSubstr(R"(ic_debits_total{result="misconfigured"} 1)"));
  const auto line = last_line();
  EXPECT_EQ(line["level"], "error") << "an operator must fix the request or configuration";
  EXPECT_EQ(line["detail"], "bank answered HTTP 400");
}

TEST_F(TelemetryTest, ProducerAttributesLeftOutOfADlqCopyAreLoggedAndCounted) {
  const std::vector<std::string> dropped{"p7", "p8"};
  telemetry_.on_dlq_attributes_dropped("m-1", dropped);
  EXPECT_THAT(metrics_.render(), HasSubstr("ic_dlq_attributes_dropped_total 2"));
  const auto line = last_line();
  EXPECT_EQ(line["msg"], "producer attributes left out of the DLQ copy");
  EXPECT_EQ(line["messageId"], "m-1");
  EXPECT_EQ(line["count"], 2);
  EXPECT_EQ(line["attributes"], "p7,p8");
}

TEST(StoreOperation, NamesAreTheMetricLabelValues) {
  EXPECT_EQ(idem::to_string(idem::StoreOperation::Claim), "claim");
  EXPECT_EQ(idem::to_string(idem::StoreOperation::Complete), "complete");
  EXPECT_EQ(idem::to_string(idem::StoreOperation::Fail), "fail");
  EXPECT_EQ(idem::to_string(idem::StoreOperation::Extend), "extend");
  EXPECT_EQ(idem::to_string(idem::StoreOperation::Release), "release");
  EXPECT_EQ(idem::to_string(idem::StoreOperation::Get), "get");
}

}  // namespace
}  // namespace ic::app
