// The jitter sources: a seed fixes the sequence; every value is in [0, 1), from any thread.
#include "core/random.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <thread>
#include <vector>

namespace ic {
namespace {

TEST(SeededRandom, SameSeedSameSequence) {
  SeededRandom a(7), b(7);
  for (int i = 0; i < 5; ++i) {
    const double x = a.uniform01();
    EXPECT_EQ(x, b.uniform01());
    EXPECT_GE(x, 0.0);
    EXPECT_LT(x, 1.0);
  }
}

TEST(SeededRandom, ConcurrentCallersShareOneSequence) {
  SeededRandom shared(11), alone(11);
  std::vector<double> expected;
  for (int i = 0; i < 4 * 1000; ++i) expected.push_back(alone.uniform01());
  std::vector<std::vector<double>> seen(4);
  std::vector<std::thread> threads;
  for (auto& mine : seen) {
    threads.emplace_back([&shared, &mine] {
      for (int i = 0; i < 1000; ++i) mine.push_back(shared.uniform01());
    });
  }
  for (auto& thread : threads) thread.join();
  std::vector<double> all;
  for (const auto& mine : seen) all.insert(all.end(), mine.begin(), mine.end());
  std::ranges::sort(all);
  std::ranges::sort(expected);
  EXPECT_EQ(all, expected);  // no value lost or repeated by a race
}

TEST(RealRandom, ValuesAreInTheUnitIntervalOnEveryThread) {
  std::vector<std::thread> threads;
  std::atomic<int> out_of_range{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 1000; ++i) {
        const double u = real_random().uniform01();
        if (!(u >= 0.0 && u < 1.0)) ++out_of_range;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(out_of_range, 0);
}

}  // namespace
}  // namespace ic
