// Task<T>: a lazily started C++20 coroutine that a caller co_awaits, so that code with many
// waits (claim, debit, notify, record) still reads top to bottom while its waits cost no thread.
// No I/O here: core/ stays free of it; the event loop (src/event) resumes what waits on I/O and
// timers, and spawn() starts a task nobody awaits (one per delivery).
//
//   Task<int> answer() { co_return 42; }
//   Task<void> caller() { const int a = co_await answer(); ... }
//   spawn(caller(), [](std::exception_ptr error) { /* finished */ });
//
// Rules that keep it safe:
// - A Task is awaited at once (co_await f(...)), so references it was given outlive it.
// - A suspended coroutine is resumed, never destroyed: cancellation is cooperative (stop tokens
//   checked by whatever it waits on), so no pending I/O is left pointing into a dead frame.
// - A task that completes without suspending hands its result back without growing the stack
//   (await_suspend returns false), so a loop over such tasks runs in constant stack even where
//   the compiler turns no resumption into a tail call (gcc at -O0, sanitizer builds).
#pragma once

#include <coroutine>
#include <exception>
#include <functional>
#include <optional>
#include <type_traits>
#include <utility>

#include "core/task_locals.hpp"

namespace ic {

// A suspended coroutine together with the task locals it ran with: resume() makes them current
// for as long as the coroutine runs, then puts back what was current.
class Resumable {
 public:
  Resumable() = default;
  [[nodiscard]] static Resumable capture(std::coroutine_handle<> handle) noexcept {
    return Resumable(handle, current_task_locals());
  }
  explicit operator bool() const noexcept { return static_cast<bool>(handle_); }
  // The task locals it resumes with (names a stalled coroutine's delivery); may be null.
  [[nodiscard]] const TaskLocals* locals() const noexcept { return locals_; }
  void resume() const {
    TaskLocals* const outer = swap_task_locals(locals_);
    handle_.resume();
    swap_task_locals(outer);
  }

 private:
  Resumable(std::coroutine_handle<> handle, TaskLocals* locals)
      : handle_(handle), locals_(locals) {}
  std::coroutine_handle<> handle_;
  TaskLocals* locals_ = nullptr;
};

template <class T = void>
class Task;

namespace task_detail {

struct PromiseBase {
  std::coroutine_handle<> continuation;
  bool starting = false;  // the awaiter is running the task's first part inline
  std::exception_ptr error;

  std::suspend_always initial_suspend() noexcept { return {}; }

  struct FinalAwaiter {
    bool await_ready() noexcept { return false; }
    template <class Promise>
    std::coroutine_handle<> await_suspend(std::coroutine_handle<Promise> self) noexcept {
      PromiseBase& promise = self.promise();
      // Finished inside the awaiter's await_suspend: it sees done() and carries on itself.
      if (promise.starting || !promise.continuation) return std::noop_coroutine();
      return promise.continuation;
    }
    void await_resume() noexcept {}
  };
  FinalAwaiter final_suspend() noexcept { return {}; }
  void unhandled_exception() noexcept { error = std::current_exception(); }
  void rethrow_if_failed() const {
    if (error) std::rethrow_exception(error);
  }
};

template <class T>
struct Promise : PromiseBase {
  std::optional<T> value;
  Task<T> get_return_object() noexcept;
  template <class U = T>
  requires std::is_constructible_v<T, U&&>
  void return_value(U&& result) { value.emplace(std::forward<U>(result)); }
  T take() {
    rethrow_if_failed();
    return std::move(*value);
  }
};

template <>
struct Promise<void> : PromiseBase {
  Task<void> get_return_object() noexcept;
  void return_void() noexcept {}
  void take() const { rethrow_if_failed(); }
};

}  // namespace task_detail

// Move-only owner of a coroutine frame. Thread-safety: a task runs on one thread at a time;
// the event loop that resumes it decides which.
template <class T>
class [[nodiscard]] Task {
 public:
  using promise_type = task_detail::Promise<T>;
  using Handle = std::coroutine_handle<promise_type>;

  Task() = default;
  explicit Task(Handle handle) noexcept : handle_(handle) {}
  Task(Task&& other) noexcept : handle_(std::exchange(other.handle_, {})) {}
  Task& operator=(Task&& other) noexcept {
    if (this != &other) {
      destroy();
      handle_ = std::exchange(other.handle_, {});
    }
    return *this;
  }
  Task(const Task&) = delete;
  Task& operator=(const Task&) = delete;
  ~Task() { destroy(); }

  [[nodiscard]] bool valid() const noexcept { return static_cast<bool>(handle_); }

  auto operator co_await() && noexcept {
    struct Awaiter {
      Handle handle;
      bool await_ready() const noexcept { return false; }
      bool await_suspend(std::coroutine_handle<> caller) noexcept {
        auto& promise = handle.promise();
        promise.continuation = caller;
        promise.starting = true;
        handle.resume();
        promise.starting = false;
        return !handle.done();
      }
      T await_resume() { return handle.promise().take(); }
    };
    return Awaiter{handle_};
  }

 private:
  void destroy() noexcept {
    if (handle_) handle_.destroy();
    handle_ = {};
  }
  Handle handle_;
};

namespace task_detail {

template <class T>
Task<T> Promise<T>::get_return_object() noexcept {
  return Task<T>(std::coroutine_handle<Promise<T>>::from_promise(*this));
}

inline Task<void> Promise<void>::get_return_object() noexcept {
  return Task<void>(std::coroutine_handle<Promise<void>>::from_promise(*this));
}

}  // namespace task_detail

// Called once a spawned task finished, with what it threw (null when it returned). Must not
// throw; it runs on whichever thread finished the task.
using TaskDone = std::function<void(std::exception_ptr)>;

// Starts `task` now, on this thread, with task locals of its own, and lets it run to completion
// without an owner: until its first suspension here, then wherever it is resumed. An exception
// it throws goes to `on_done` and no further: a detached task has nobody to throw to.
void spawn(Task<void> task, TaskDone on_done = {});

}  // namespace ic
