// The boundary of every thread the program starts: an exception that reaches it is reported
// and swallowed, because one escaping a thread calls std::terminate and takes the process down
// without a word. The owner of the thread decides what a failure means (carry on with the next
// unit of work, or stop cleanly); the guard only makes sure it is seen.
//
//   std::thread([&] {
//     while (running) run_guarded("ack-batcher", observer, [&] { send_one_batch(); });
//   });
#pragma once

#include <exception>
#include <string_view>
#include <utility>

namespace ic {

// Thread-safety: called from whichever thread failed, concurrently. Must not throw.
// Ownership: borrowed by the threads that report to it; outlives them.
class ThreadFailureObserver {
 public:
  virtual ~ThreadFailureObserver() = default;
  // `thread` names the kind of thread ("receiver", "worker", ...); `what` is the exception's
  // what() (or a fixed text for a non-standard exception).
  virtual void on_thread_exception(std::string_view thread, std::string_view what) noexcept = 0;
};

// Runs `body()`; returns false when it threw, after reporting to `observer` (may be null).
template <class Body>
bool run_guarded(std::string_view thread, ThreadFailureObserver* observer, Body&& body) noexcept {
  try {
    std::forward<Body>(body)();
    return true;
  } catch (const std::exception& e) {
    if (observer) observer->on_thread_exception(thread, e.what());
  } catch (...) {
    if (observer) observer->on_thread_exception(thread, "non-standard exception");
  }
  return false;
}

// The same boundary for a task nobody awaits (spawn()'s on_done): reports what it threw, if
// anything, to `observer` (may be null).
inline void report_failure(std::string_view thread, ThreadFailureObserver* observer,
                           const std::exception_ptr& error) noexcept {
  if (!error || observer == nullptr) return;
  try {
    std::rethrow_exception(error);
  } catch (const std::exception& e) {
    observer->on_thread_exception(thread, e.what());
  } catch (...) {
    observer->on_thread_exception(thread, "non-standard exception");
  }
}

}  // namespace ic
