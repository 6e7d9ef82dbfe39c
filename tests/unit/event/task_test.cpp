// Task<T> and spawn(): results and exceptions travel to the awaiter, a task that finishes
// without suspending costs no stack (a long loop of them runs in constant stack at -O0), and a
// spawned task's locals stay its own across suspensions.
#include "core/task.hpp"

#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace ic {
namespace {

Task<int> forty_two() {
  co_return 42;
}

Task<int> add_one(int x) {
  co_return co_await forty_two() - 42 + x + 1;
}

Task<void> thrower() {
  throw std::runtime_error("broken");
  co_return;
}

// A hand-resumed suspension point: what an event loop's waits look like from a task. Awaited
// through a prvalue (gate.wait()): gcc 12 copies an lvalue awaiter into the frame.
struct Gate {
  struct Wait {
    Gate& gate;
    bool await_ready() const noexcept { return false; }
    void await_suspend(std::coroutine_handle<> handle) {
      gate.waiting.push_back(Resumable::capture(handle));
    }
    void await_resume() const noexcept {}
  };
  Wait wait() { return Wait{*this}; }
  std::vector<Resumable> waiting;
  void open() {
    auto all = std::move(waiting);
    for (const auto& resumable : all) resumable.resume();
  }
};

TEST(Task, HandsItsResultToTheAwaiter) {
  int result = 0;
  auto task = [&]() -> Task<void> { result = co_await add_one(1); };
  spawn(task());
  EXPECT_EQ(result, 2);
}

TEST(Task, AnExceptionReachesTheAwaiterAndASpawnedTaskReportsIt) {
  std::string caught;
  auto catcher = [&]() -> Task<void> {
    try {
      co_await thrower();
    } catch (const std::runtime_error& error) {
      caught = error.what();
    }
  };
  spawn(catcher());
  EXPECT_EQ(caught, "broken");

  std::exception_ptr reported;
  spawn(thrower(), [&](std::exception_ptr error) { reported = error; });
  ASSERT_TRUE(reported);
  EXPECT_THROW(std::rethrow_exception(reported), std::runtime_error);
}

TEST(Task, AMillionTasksThatFinishAtOnceRunInConstantStack) {
  long sum = 0;
  auto adder = [&]() -> Task<void> {
    for (int i = 0; i < 1'000'000; ++i) sum += co_await forty_two();
  };
  spawn(adder());
  EXPECT_EQ(sum, 42'000'000);
}

TEST(Task, AnAwaiterResumesWhenItsTaskFinishesLater) {
  Gate gate;
  std::vector<std::string> steps;
  auto inner = [&]() -> Task<int> {
    steps.push_back("inner waits");
    co_await gate.wait();
    steps.push_back("inner resumed");
    co_return 7;
  };
  bool done = false;
  // Named, not a temporary: a lambda coroutine reads its captures through the closure, which
  // must outlive every suspension.
  auto outer = [&]() -> Task<void> {
    const int value = co_await inner();
    steps.push_back("outer got " + std::to_string(value));
  };
  spawn(outer(), [&](std::exception_ptr) { done = true; });
  EXPECT_FALSE(done);
  gate.open();
  EXPECT_TRUE(done);
  EXPECT_EQ(steps, (std::vector<std::string>{"inner waits", "inner resumed", "outer got 7"}));
}

TEST(Task, EachSpawnedTaskKeepsItsOwnLocalsAcrossSuspensions) {
  Gate gate;
  std::vector<std::string> seen;
  auto task = [&](std::string id) -> Task<void> {
    task_locals().message_id = id;
    co_await gate.wait();
    seen.push_back(task_locals().message_id);
  };
  task_locals().message_id = "thread";
  spawn(task("a"));
  spawn(task("b"));
  EXPECT_EQ(task_locals().message_id, "thread") << "the spawner's locals are back";
  gate.open();
  EXPECT_EQ(seen, (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(task_locals().message_id, "thread");
  task_locals().message_id.clear();
}

}  // namespace
}  // namespace ic
