// Readiness over dependencies: probes (down until they answer, down after one failure or a
// silence), traffic (a grace of one failure), recovery, and the listener that feeds gauges.
#include "observability/readiness.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "observability/prober.hpp"
#include "testing/clocks.hpp"

namespace ic::observability {
namespace {

using namespace std::chrono_literals;

const Error kTimeout{.error_class = ErrorClass::Retryable,
                     .code = "TimeoutAfterSend",
                     .message = "no answer within 5 s"};
const Error kGone{.error_class = ErrorClass::Permanent,
                  .code = "AWS.SimpleQueueService.NonExistentQueue",
                  .message = "The specified queue does not exist."};

class RecordingListener final : public ReadinessListener {
 public:
  void on_readiness(std::span<const DependencyStatus> dependencies, bool ready) override {
    std::string line = ready ? "ready" : "not ready";
    for (const auto& d : dependencies) line += " " + d.name + "=" + (d.up ? "up" : d.code);
    changes.push_back(line);
  }
  std::vector<std::string> changes;
};

class ReadinessTest : public ::testing::Test {
 protected:
  DependencyStatus status(std::string_view name) {
    for (auto& s : readiness_.statuses()) {
      if (s.name == name) return s;
    }
    ADD_FAILURE() << "no dependency " << name;
    return {};
  }

  testing::ManualClock clock_;
  RecordingListener listener_;
  Readiness readiness_{clock_,
                       {{.name = "queue", .max_silence = 45s},
                        {.name = "table", .max_silence = 45s},
                        {.name = "receive", .failures_to_down = 2, .up_until_proven = true},
                        {.name = "store",
                         .failures_to_down = 2,
                         .up_until_proven = true,
                         .recovered_by = "table",
                         .quiet_period = 15s}},
                       &listener_};
};

TEST_F(ReadinessTest, NotReadyUntilEveryProbeHasAnsweredThenReadyWithoutAnyTraffic) {
  EXPECT_FALSE(readiness_.ready());
  EXPECT_EQ(status("queue").code, "NotProbedYet");
  EXPECT_TRUE(status("receive").up) << "traffic-fed dependencies start up";
  readiness_.succeeded("queue");
  EXPECT_FALSE(readiness_.ready());
  readiness_.succeeded("table");
  EXPECT_TRUE(readiness_.ready()) << "no receive has returned yet, and none needs to";
  EXPECT_THAT(listener_.changes,
              ::testing::ElementsAre("not ready queue=up table=NotProbedYet receive=up store=up",
                                     "ready queue=up table=up receive=up store=up"));
}

TEST_F(ReadinessTest, ADependencyDownForANewReasonIsAChangeTheSameReasonIsNot) {
  readiness_.failed("table", {.code = "AccessDenied", .message = "not authorized: GetItem"});
  readiness_.failed("table", {.code = "AccessDenied", .message = "not authorized: GetItem"});
  EXPECT_THAT(
      listener_.changes,
      ::testing::ElementsAre("not ready queue=NotProbedYet table=AccessDenied receive=up store=up"))
      << "a probe refused from the start must be heard, though the table was never up";
}

class ReadyTest : public ReadinessTest {
 protected:
  void SetUp() override {
    readiness_.succeeded("queue");
    readiness_.succeeded("table");
    ASSERT_TRUE(readiness_.ready());
    listener_.changes.clear();
  }
};

TEST_F(ReadyTest, OneFailedProbeIsEnoughAndItsCodeAndMessageSayWhy) {
  readiness_.failed("queue", kGone);
  EXPECT_FALSE(readiness_.ready());
  const auto queue = status("queue");
  EXPECT_FALSE(queue.up);
  EXPECT_EQ(queue.code, "AWS.SimpleQueueService.NonExistentQueue");
  EXPECT_EQ(queue.detail, "The specified queue does not exist.");
  readiness_.succeeded("queue");
  EXPECT_TRUE(readiness_.ready()) << "back on the next answer";
  EXPECT_TRUE(status("queue").code.empty());
}

TEST_F(ReadyTest, TrafficGetsAGraceOfOneFailureAndASuccessResetsIt) {
  readiness_.failed("receive", kTimeout);
  EXPECT_TRUE(readiness_.ready()) << "one failed receive among many is noise";
  readiness_.succeeded("receive");
  readiness_.failed("receive", kTimeout);
  EXPECT_TRUE(readiness_.ready()) << "the success reset the count";
  readiness_.failed("receive", kTimeout);
  EXPECT_FALSE(readiness_.ready()) << "two in a row is an outage";
  EXPECT_EQ(status("receive").code, "TimeoutAfterSend");
  readiness_.succeeded("receive");
  EXPECT_TRUE(readiness_.ready());
  EXPECT_THAT(
      listener_.changes,
      ::testing::ElementsAre("not ready queue=up table=up receive=TimeoutAfterSend store=up",
                             "ready queue=up table=up receive=up store=up"))
      << "the listener hears changes only";
}

TEST_F(ReadyTest, AProbeThatFallsSilentCountsAsDown) {
  clock_.advance(45s);
  EXPECT_TRUE(readiness_.ready());
  clock_.advance(1ms);
  EXPECT_FALSE(readiness_.ready()) << "a hung probe or a dead prober must not leave it green";
  EXPECT_EQ(status("queue").code, "ProbeOverdue");
  EXPECT_EQ(status("queue").detail, "no answer for 45 s");
  readiness_.succeeded("queue");
  readiness_.succeeded("table");
  EXPECT_TRUE(readiness_.ready());
}

TEST_F(ReadyTest, AStoreDownOnTrafficComesBackWithTheTableProbeOnceItHasBeenQuiet) {
  readiness_.failed("store", kTimeout);
  readiness_.failed("store", kTimeout);
  EXPECT_FALSE(readiness_.ready());
  clock_.advance(10s);
  readiness_.succeeded("table");
  EXPECT_FALSE(readiness_.ready()) << "the store failed 10 s ago: too recent to trust a probe";
  clock_.advance(5s);
  readiness_.succeeded("table");
  EXPECT_TRUE(readiness_.ready()) << "an empty queue brings no claim to prove recovery";
  EXPECT_TRUE(status("store").code.empty());
}

TEST_F(ReadyTest, UnknownNamesAreIgnored) {
  readiness_.failed("nonsense", kGone);
  readiness_.failed("nonsense", kGone);
  EXPECT_TRUE(readiness_.ready());
}

TEST_F(ReadyTest, ALongErrorMessageIsBounded) {
  readiness_.failed("table", {.code = "X", .message = std::string(5000, 'm')});
  EXPECT_EQ(status("table").detail.size(), 200u);
}

class RecordingFailures final : public ThreadFailureObserver {
 public:
  void on_thread_exception(std::string_view thread, std::string_view what) noexcept override {
    reports.push_back(std::string(thread) + ": " + std::string(what));
  }
  std::vector<std::string> reports;
};

TEST_F(ReadinessTest, TheProberReportsEveryProbeAndAThrowingOneCountsAsFailed) {
  RecordingFailures failures;
  bool queue_ok = true;
  Prober prober(
      readiness_,
      {{"queue",
        [&]() -> std::expected<void, Error> {
          if (queue_ok) return {};
          return std::unexpected(kGone);
        }},
       {"table", []() -> std::expected<void, Error> { throw std::runtime_error("decoder bug"); }}},
      {}, &failures);
  EXPECT_FALSE(prober.probe_once());
  EXPECT_TRUE(status("queue").up);
  EXPECT_EQ(status("table").code, "ProbeException");
  EXPECT_THAT(failures.reports, ::testing::ElementsAre("prober: decoder bug"));
  queue_ok = false;
  EXPECT_FALSE(prober.probe_once());
  EXPECT_EQ(status("queue").code, "AWS.SimpleQueueService.NonExistentQueue");
}

TEST_F(ReadinessTest, TheProberThreadProbesAtOnceAndStopsWithoutWaitingOutItsInterval) {
  std::atomic<int> rounds{0};
  Prober prober(readiness_,
                {{"queue", [&]() -> std::expected<void, Error> { return {}; }},
                 {"table",
                  [&]() -> std::expected<void, Error> {
                    ++rounds;
                    return {};
                  }}},
                {.interval = 1h, .retry_interval = 1h});
  prober.start();
  const auto deadline = std::chrono::steady_clock::now() + 30s;
  while (!readiness_.ready() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::yield();
  }
  EXPECT_TRUE(readiness_.ready());
  prober.stop();  // a one-hour wait would hang the test here if stop did not interrupt it
  EXPECT_EQ(rounds.load(), 1);
}

}  // namespace
}  // namespace ic::observability
