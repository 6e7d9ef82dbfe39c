// The thread boundary guard: whatever a thread's body throws is reported once and swallowed.
#include "core/thread_guard.hpp"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

namespace ic {
namespace {

class RecordingObserver final : public ThreadFailureObserver {
 public:
  void on_thread_exception(std::string_view thread, std::string_view what) noexcept override {
    reports.emplace_back(thread, what);
  }
  std::vector<std::pair<std::string, std::string>> reports;
};

TEST(RunGuarded, ABodyThatReturnsIsNotReported) {
  RecordingObserver observer;
  int runs = 0;
  EXPECT_TRUE(run_guarded("worker", &observer, [&] { ++runs; }));
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(observer.reports.empty());
}

TEST(RunGuarded, AStandardExceptionIsReportedWithItsThreadAndWhat) {
  RecordingObserver observer;
  EXPECT_FALSE(
      run_guarded("receiver", &observer, [] { throw std::invalid_argument("sigv4: not a URL"); }));
  EXPECT_THAT(observer.reports, ::testing::ElementsAre(std::pair<std::string, std::string>(
                                    "receiver", "sigv4: not a URL")));
}

TEST(RunGuarded, ANonStandardExceptionIsReportedToo) {
  RecordingObserver observer;
  EXPECT_FALSE(run_guarded("prober", &observer, [] { throw 42; }));
  ASSERT_EQ(observer.reports.size(), 1u);
  EXPECT_EQ(observer.reports[0].first, "prober");
  EXPECT_EQ(observer.reports[0].second, "non-standard exception");
}

TEST(RunGuarded, WithoutAnObserverTheExceptionIsStillContained) {
  EXPECT_FALSE(run_guarded("worker", nullptr, [] { throw std::runtime_error("x"); }));
}

TEST(RunGuarded, AThreadWhoseBodyThrowsEndsNormallyInsteadOfTerminating) {
  RecordingObserver observer;
  std::thread thread(
      [&] { run_guarded("ack-batcher", &observer, [] { throw std::bad_alloc(); }); });
  thread.join();  // std::terminate would have aborted the test binary before this line
  ASSERT_EQ(observer.reports.size(), 1u);
  EXPECT_EQ(observer.reports[0].first, "ack-batcher");
}

}  // namespace
}  // namespace ic
