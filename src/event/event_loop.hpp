// The event loop of the event-driven core: one thread waits in epoll for every socket, timer
// and hand-over of the work it owns, and resumes the coroutines waiting on them. Many charges
// in flight then cost coroutine frames, not threads, and a hand-over between two of them is a
// function call, not a context switch (docs/design.md §4, "The event-driven core").
//
//   event::EventLoop loop;
//   spawn(handle(message));                  // runs until its first wait
//   loop.run_until([&] { return finished; });
//   loop.post([&] { finished = true; });     // from any thread
//
// Everything but post(), wake() and the constructor is for the loop's own thread: the one
// inside run_until() or run_ready(), or, before the loop first runs, the thread that made it.
#pragma once

#include <sys/epoll.h>

#include <cstdint>
#include <deque>
#include <expected>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/task.hpp"
#include "core/thread_annotations.hpp"
#include "core/time.hpp"
#include "event/loop_observer.hpp"

namespace ic::event {

// A turn longer than this holds every charge, heartbeat and ack on the loop: a stall.
inline constexpr Millis kStallThreshold{100};

// Told when a watched descriptor is ready. Ownership: borrowed by the loop until unwatch().
class FdHandler {
 public:
  virtual ~FdHandler() = default;
  // `events`: EPOLLIN, EPOLLOUT, EPOLLERR, EPOLLHUP as epoll reported them.
  virtual void on_ready(int fd, std::uint32_t events) = 0;
};

// Per-loop state of a service built on the loop (a transport's libcurl multi handle, say):
// created on first use, destroyed with the loop, before the loop's own descriptors.
class Attachment {
 public:
  virtual ~Attachment() = default;
};

// Thread-safety: as in the header comment. Ownership: the loop owns its epoll and wake-up
// descriptors, its timers' callbacks, posted work and attachments; it borrows the clock and
// every FdHandler. Coroutines still suspended on it when it is destroyed are not resumed.
class EventLoop {
 public:
  using TimerId = std::uint64_t;

  explicit EventLoop(const MonotonicClock& clock = real_monotonic_clock());
  ~EventLoop();
  EventLoop(const EventLoop&) = delete;
  EventLoop& operator=(const EventLoop&) = delete;

  // The loop running on this thread (the innermost, if one runs inside another's callback), or
  // nullptr.
  [[nodiscard]] static EventLoop* current() noexcept;

  // Runs until `done()` is true; it is checked before every wait, so whatever made it true
  // also ends the run.
  void run_until(const std::function<bool()>& done);
  // Runs what is ready now (posted work, resumed coroutines, due timers, ready descriptors),
  // again and again until nothing is, without waiting. Returns whether anything ran. For tests
  // whose clock moves by hand.
  bool run_ready();

  // Any thread: `work` runs on the loop's thread, in the order posted.
  void post(std::function<void()> work);

  // Loop thread: `resumable` is resumed from the top of a coming iteration, never inside the
  // caller, so a waker never runs the woken coroutine on its own stack.
  void resume_soon(Resumable resumable);

  [[nodiscard]] SteadyInstant now() const { return clock_.now(); }
  // Calls `on_due` once the clock reads `due` or later; timers due together run in the order
  // they were added.
  TimerId add_timer(SteadyInstant due, std::function<void()> on_due);
  // True when the timer had not run yet (it never will now).
  bool cancel_timer(TimerId id) noexcept;

  // Watches `fd` for `events` (EPOLLIN / EPOLLOUT); watching it again changes the events and
  // the handler (a descriptor closed without unwatch() whose number was reused is watched as
  // the new one it now is). An error (epoll's reason) when epoll refuses it.
  [[nodiscard]] std::expected<void, std::string> watch(int fd, std::uint32_t events,
                                                       FdHandler& handler);
  // Stops watching; safe for a descriptor already closed or never watched, and from inside
  // that descriptor's own on_ready.
  void unwatch(int fd) noexcept;

  // From now on every turn longer than `threshold` is reported to `observer` (null: none),
  // with what ran. Costs one clock read per turn, and one after each wait that may block.
  void observe(LoopObserver* observer, std::chrono::nanoseconds threshold = kStallThreshold) {
    observer_ = observer;
    stall_threshold_ = threshold;
  }

  // This loop's attachment under `key`, made by `make()` on first use. Keys name what the
  // attachment holds (a transport's TLS files, say), not who asked, so a service made again
  // finds what its predecessor left instead of piling up another.
  template <class T, class Make>
  T& attachment(std::string_view key, Make&& make) {
    for (auto& [name, attached] : attachments_) {
      if (name == key) return static_cast<T&>(*attached);
    }
    std::unique_ptr<T> made = std::forward<Make>(make)();
    T& result = *made;
    attachments_.emplace_back(std::string(key), std::move(made));
    return result;
  }

 private:
  struct Timer {
    SteadyInstant due;
    TimerId id;
    bool operator>(const Timer& other) const {
      return due != other.due ? due > other.due : id > other.id;
    }
  };
  struct Watch {
    std::uint32_t generation;
    FdHandler* handler;
  };
  class CurrentScope;

  // One pass; returns whether anything ran.
  bool run_pending();
  bool run_posted();
  bool run_resumed();
  bool run_due_timers();
  // Waits in epoll at most `timeout_ms` (-1: no limit) and dispatches what is ready.
  bool wait_for_events(int timeout_ms);
  [[nodiscard]] int timeout_until_next_timer();
  void drain_wake_fd() const;
  // Turn timing (observe()): the end of one turn is the start of the next.
  void start_turns() {
    if (observer_ != nullptr) turn_started_ = clock_.now();
  }
  // `describe()` names the turn that just ended; it is called only for a stall.
  template <class Describe>
  void end_turn(Describe&& describe) {
    if (observer_ == nullptr) return;
    const SteadyInstant now = clock_.now();
    if (now - turn_started_ > stall_threshold_) {
      observer_->on_stall(std::forward<Describe>(describe)(), now - turn_started_);
    }
    turn_started_ = now;
  }

  const MonotonicClock& clock_;
  int epoll_fd_ = -1;
  int wake_fd_ = -1;

  Mutex posted_mutex_;
  std::vector<std::function<void()>> posted_ GUARDED_BY(posted_mutex_);

  std::deque<Resumable> resumed_;
  // A min-heap by (due, id), cancelled entries left in place until they surface, or until they
  // outnumber the live ones (cancel_timer compacts it): a heartbeat's timer is cancelled half a
  // lease early at every delivery, and they must not pile up.
  std::vector<Timer> timer_queue_;
  std::unordered_map<TimerId, std::function<void()>> timers_;
  TimerId next_timer_ = 1;
  std::unordered_map<int, Watch> watches_;
  std::uint32_t next_generation_ = 1;
  std::vector<std::pair<std::string, std::unique_ptr<Attachment>>> attachments_;
  LoopObserver* observer_ = nullptr;
  std::chrono::nanoseconds stall_threshold_{kStallThreshold};
  SteadyInstant turn_started_{};
};

}  // namespace ic::event
