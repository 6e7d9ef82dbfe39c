// The bridge from blocking code to tasks: run_blocking(task) runs `task` to its end on an event
// loop of the calling thread and returns its result. The operator commands, start-up checks,
// the readiness prober and the tests call the same asynchronous adapters the consumer's loop
// uses, so there is one implementation of each, not a blocking twin.
//
//   auto record = event::run_blocking(store.get("CHG-1"));   // blocks this thread
#pragma once

#include <exception>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "core/task.hpp"
#include "event/event_loop.hpp"

namespace ic::event {

// The loop run_blocking() runs on this thread: the thread's own (made on first use, kept with
// its connections until the thread ends), or a fresh one when the thread's own is already
// running further up this stack, for a blocking call made from inside a loop's callback. Such a
// call holds up that outer loop until it returns; the core makes none on its hot path.
class BlockingLoop {
 public:
  BlockingLoop();
  ~BlockingLoop();
  BlockingLoop(const BlockingLoop&) = delete;
  BlockingLoop& operator=(const BlockingLoop&) = delete;
  [[nodiscard]] EventLoop& loop() { return *loop_; }

 private:
  std::unique_ptr<EventLoop> fresh_;
  EventLoop* loop_;
};

namespace blocking_detail {

template <class T>
Task<void> store_into(Task<T> task, std::optional<T>& out) {
  out.emplace(co_await std::move(task));
}

inline Task<void> store_into(Task<void> task, std::optional<bool>& out) {
  co_await std::move(task);
  out.emplace(true);
}

template <class T>
using Slot = std::optional<std::conditional_t<std::is_void_v<T>, bool, T>>;

}  // namespace blocking_detail

// Runs `loop` on this thread until `task`, started on it, finishes; rethrows what it threw.
// For a caller that owns a loop its tasks must share (a test's, or start-up before the
// consumer's loop serves): the loop must not be running already.
template <class T>
T run_on(EventLoop& loop, Task<T> task) {
  blocking_detail::Slot<T> result;
  std::exception_ptr error;
  bool finished = false;
  loop.post([&] {
    spawn(blocking_detail::store_into(std::move(task), result), [&](std::exception_ptr thrown) {
      error = thrown;
      finished = true;
    });
  });
  loop.run_until([&] { return finished; });
  if (error) std::rethrow_exception(error);
  if constexpr (!std::is_void_v<T>) return std::move(*result);
}

// Runs `task` on this thread until it finishes; rethrows what it threw. Thread-safety: any
// thread; the task's I/O uses the loop this runs, so adapters it calls need no other.
template <class T>
T run_blocking(Task<T> task) {
  BlockingLoop blocking;
  return run_on(blocking.loop(), std::move(task));
}

}  // namespace ic::event
