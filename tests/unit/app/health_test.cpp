// What `run`'s readiness watches, and the start-up check of the source queue's settings.
#include "app/health.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "testing/clocks.hpp"

namespace ic::app {
namespace {

using namespace std::chrono_literals;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

sqs::QueueSettings provisioned(std::chrono::seconds visibility, std::int64_t max_receive) {
  return {.visibility_timeout = visibility,
          .has_redrive_policy = true,
          .max_receive_count = max_receive};
}

TEST(CheckQueueSettings, AQueueAsProvisionIsDeservesNoWarning) {
  EXPECT_TRUE(check_queue_settings(60s, provisioned(60s, 10)).empty());
  EXPECT_TRUE(check_queue_settings(30s, provisioned(60s, 3)).empty());
}

TEST(CheckQueueSettings, ALeaseLongerThanTheVisibilityTimeoutIsAWarning) {
  EXPECT_THAT(check_queue_settings(61s, provisioned(60s, 10)),
              ElementsAre(HasSubstr("LEASE_SECONDS exceeds the source queue's VisibilityTimeout")));
}

TEST(CheckQueueSettings, AMaxReceiveCountBelowThreeOrNoRedrivePolicyIsAWarning) {
  EXPECT_THAT(check_queue_settings(60s, provisioned(60s, 2)),
              ElementsAre(HasSubstr("maxReceiveCount is below 3")));
  EXPECT_THAT(check_queue_settings(60s, {.visibility_timeout = 60s}),
              ElementsAre(HasSubstr("no RedrivePolicy")));
  EXPECT_THAT(check_queue_settings(60s, {.visibility_timeout = 60s, .has_redrive_policy = true}),
              ElementsAre(HasSubstr("maxReceiveCount is below 3")))
      << "a policy whose count cannot be read is not trusted";
  EXPECT_EQ(check_queue_settings(90s, provisioned(60s, 1)).size(), 2u);
}

TEST(RunDependencies, ReadyOnceTheProbesAnswerAndDownAfterOneFailedProbeOrTwoFailedCalls) {
  testing::ManualClock clock;
  observability::Readiness readiness(clock, run_dependencies(15s));
  for (const char* probe : {"queue", "dlq", "table"}) {
    EXPECT_FALSE(readiness.ready()) << "before " << probe;
    readiness.succeeded(probe);
  }
  EXPECT_TRUE(readiness.ready()) << "no receive needed: an empty queue is ready at once";
  const Error paused{.code = "TimeoutAfterSend"};
  readiness.failed("receive", paused);
  EXPECT_TRUE(readiness.ready());
  readiness.failed("receive", paused);
  EXPECT_FALSE(readiness.ready());
  readiness.succeeded("receive");
  readiness.failed("dlq", {.code = "AccessDenied"});
  EXPECT_FALSE(readiness.ready());
  readiness.succeeded("dlq");
  clock.advance(45s);
  EXPECT_TRUE(readiness.ready());
  clock.advance(1s);
  EXPECT_FALSE(readiness.ready()) << "probes silent for two intervals plus a round's bound";
}

}  // namespace
}  // namespace ic::app
