// ic_dependency_seconds: every port call through the timed decorators is observed once under
// its dependency and operation, and the decorators pass results through unchanged. Durations
// are not asserted (wall time); counts and labels are.
#include "app/telemetry/dependency_timing.hpp"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "event/run_blocking.hpp"
#include "testing/fake_queue.hpp"
#include "testing/fakes.hpp"
#include "testing/in_memory_store.hpp"

namespace ic::app {
namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

std::string count_line(std::string_view dependency, std::string_view operation, int n) {
  return fmt::format("ic_dependency_seconds_count{{dependency=\"{}\",operation=\"{}\"}} {}\n",
                     dependency, operation, n);
}

TEST(DependencyTimingTest, EveryCallIsObservedOnceUnderItsDependencyAndOperation) {
  observability::MetricsRegistry metrics;
  DependencyTimings timings(metrics);
  memory::InMemoryIdempotencyStore store(24h);
  testing::FakeBank bank;
  testing::FakeNotifier notifier;
  testing::FakeQueue queue;
  TimedStore timed_store(store, timings);
  TimedDebit timed_bank(bank, timings);
  TimedNotification timed_notifier(notifier, timings);
  TimedQueue timed_queue(queue, timings);

  const domain::Charge charge = testing::make_charge();
  auto claimed = event::run_blocking(timed_store.claim({.key = "CHG-1",
                                                        .payload_hash = "h",
                                                        .token = "t1",
                                                        .owner = "w",
                                                        .now = Instant{Millis{1000}},
                                                        .lease = 60s}));
  ASSERT_TRUE(claimed);
  EXPECT_EQ(claimed->outcome, idempotency::ClaimOutcome::Acquired) << "passed through";
  ASSERT_TRUE(event::run_blocking(timed_store.release("CHG-1", "t1")));
  ASSERT_TRUE(event::run_blocking(timed_store.get("CHG-1")));
  ASSERT_TRUE(event::run_blocking(timed_store.get("CHG-1")));
  const auto debited = event::run_blocking(timed_bank.debit(charge, "CHG-1"));
  ASSERT_TRUE(std::holds_alternative<domain::Debited>(debited));
  EXPECT_EQ(std::get<domain::Debited>(debited).debit_ref, "DBT-CHG-1");
  EXPECT_TRUE(std::holds_alternative<domain::NotificationSent>(
      event::run_blocking(timed_notifier.notify(charge, "DBT-CHG-1", "CHG-1:notify"))));
  queue.send("body");
  auto received = event::run_blocking(timed_queue.receive(10, 0s, {}));
  ASSERT_TRUE(received);
  ASSERT_EQ(received->size(), 1u);
  const consumer::DeleteEntry entry{received->front().message_id, received->front().receipt_handle};
  ASSERT_TRUE(event::run_blocking(timed_queue.delete_batch(std::span(&entry, 1))));
  EXPECT_TRUE(queue.deleted(entry.message_id));

  const std::string text = metrics.render();
  EXPECT_THAT(text, HasSubstr(count_line("store", "claim", 1)));
  EXPECT_THAT(text, HasSubstr(count_line("store", "release", 1)));
  EXPECT_THAT(text, HasSubstr(count_line("store", "get", 2)));
  EXPECT_THAT(text, HasSubstr(count_line("bank", "debit", 1)));
  EXPECT_THAT(text, HasSubstr(count_line("notification", "notify", 1)));
  EXPECT_THAT(text, HasSubstr(count_line("queue", "receive", 1)));
  EXPECT_THAT(text, HasSubstr(count_line("queue", "delete", 1)));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("operation=\"complete\"")))
      << "a series appears at its first call";
}

}  // namespace
}  // namespace ic::app
