// Waiting on the event loop: WaitQueue is the loop's condition variable (no mutex: everything
// on a loop runs on its one thread), with a deadline and a stop token, so every wait of the
// core (a free slot, a probe time, a holder's final write, a stop) is one co_await that ends
// for exactly one of three reasons. sleep_until() and Semaphore are built on it.
//
//   WaitQueue changed(loop);
//   while (!ready()) {
//     if (co_await changed.wait(deadline, stop) != Wake::Notified) co_return;  // late or stopping
//   }
//   changed.notify_all();   // elsewhere, after making ready() true
#pragma once

#include <cstddef>
#include <optional>
#include <stop_token>

#include "core/async_sleeper.hpp"
#include "core/task.hpp"
#include "event/event_loop.hpp"

namespace ic::event {

enum class Wake { Notified, TimedOut, Stopped };

// Thread-safety: loop thread only, stop requests included (a stop_source whose waits are on a
// loop is stopped from a task or a posted function of that loop). Ownership: borrows the loop;
// must be destroyed with no waiter in it.
class WaitQueue {
 public:
  class Awaiter;

  explicit WaitQueue(EventLoop& loop) : loop_(loop) {}
  WaitQueue(const WaitQueue&) = delete;
  WaitQueue& operator=(const WaitQueue&) = delete;

  // Ends when notified, once the loop's clock reads `deadline` (none: never) or once `stop` is
  // requested, whichever comes first; a stop already requested, or a deadline already past,
  // ends it at once. The waiter resumes from the loop, never inside notify_*().
  [[nodiscard]] Awaiter wait(std::optional<SteadyInstant> deadline = std::nullopt,
                             std::stop_token stop = {});
  // Wakes the longest waiting; false when nobody waits.
  bool notify_one();
  void notify_all();
  [[nodiscard]] bool has_waiters() const { return head_ != nullptr; }
  [[nodiscard]] EventLoop& loop() const { return loop_; }

 private:
  void link(Awaiter& waiter);
  void unlink(Awaiter& waiter);

  EventLoop& loop_;
  Awaiter* head_ = nullptr;
  Awaiter* tail_ = nullptr;
};

class WaitQueue::Awaiter {
 public:
  Awaiter(WaitQueue& queue, std::optional<SteadyInstant> deadline, std::stop_token stop)
      : queue_(queue), deadline_(deadline), stop_(std::move(stop)) {}
  Awaiter(const Awaiter&) = delete;
  Awaiter& operator=(const Awaiter&) = delete;
  ~Awaiter();

  bool await_ready();
  void await_suspend(std::coroutine_handle<> handle);
  Wake await_resume();

 private:
  friend class WaitQueue;
  struct OnStop {
    Awaiter* self;
    void operator()() const noexcept { self->finish(Wake::Stopped); }
  };
  void finish(Wake why);

  WaitQueue& queue_;
  std::optional<SteadyInstant> deadline_;
  std::stop_token stop_;
  Resumable resumable_;
  std::optional<EventLoop::TimerId> timer_;
  std::optional<std::stop_callback<OnStop>> on_stop_;
  Awaiter* previous_ = nullptr;
  Awaiter* next_ = nullptr;
  bool linked_ = false;
  bool finished_ = false;
  Wake result_ = Wake::Notified;
};

// True once the loop's clock reads `due`; false when `stop` came first.
[[nodiscard]] Task<bool> sleep_until(EventLoop& loop, SteadyInstant due, std::stop_token stop = {});
[[nodiscard]] Task<bool> sleep_for(EventLoop& loop, Millis delay, std::stop_token stop = {});

// The AsyncSleeper of the process: sleeps on the loop running the awaiting task.
[[nodiscard]] AsyncSleeper& loop_sleeper();

// Counts permits; acquire() waits, first come first served among those waiting, for one.
// Thread-safety and ownership: as WaitQueue.
class Semaphore {
 public:
  Semaphore(EventLoop& loop, std::size_t permits) : waiters_(loop), available_(permits) {}

  // True with a permit; false, without one, once `stop` is requested.
  [[nodiscard]] Task<bool> acquire(std::stop_token stop = {});
  [[nodiscard]] bool try_acquire();
  void release();
  [[nodiscard]] std::size_t available() const { return available_; }

 private:
  WaitQueue waiters_;
  std::size_t available_;
};

}  // namespace ic::event
