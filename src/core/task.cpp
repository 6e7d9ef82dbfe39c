#include "core/task.hpp"

namespace ic {
namespace {

// Eager and self-destroying: the frame of a spawned task, which owns its task locals.
struct Detached {
  struct promise_type {
    Detached get_return_object() noexcept { return {}; }
    std::suspend_never initial_suspend() noexcept { return {}; }
    std::suspend_never final_suspend() noexcept { return {}; }
    void return_void() noexcept {}
    void unhandled_exception() noexcept { std::terminate(); }  // the body catches everything
  };
};

Detached run_detached(Task<void> task, TaskDone on_done, TaskLocals locals) {
  // The spawner puts its own locals back once this first suspends (or finishes).
  swap_task_locals(&locals);
  std::exception_ptr error;
  try {
    co_await std::move(task);
  } catch (...) {
    error = std::current_exception();
  }
  if (on_done) {
    try {
      on_done(error);
    } catch (...) {  // NOLINT(bugprone-empty-catch): on_done must not throw; nobody could catch it
    }
  }
}

}  // namespace

void spawn(Task<void> task, TaskDone on_done) {
  TaskLocals* const outer = current_task_locals();
  run_detached(std::move(task), std::move(on_done), TaskLocals{});
  swap_task_locals(outer);
}

}  // namespace ic
