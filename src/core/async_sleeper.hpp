// Waiting without a thread: the retry backoff of a task (an AWS call's next attempt) waits on
// the event loop it runs on. Injected, so tests record the waits and take no time.
#pragma once

#include <stop_token>

#include "core/task.hpp"
#include "core/time.hpp"

namespace ic {

// Thread-safety: sleep_for() is called, and awaited at once, on an event loop's thread.
// Ownership: injected by reference; the owner outlives every user.
class AsyncSleeper {
 public:
  virtual ~AsyncSleeper() = default;
  // True after `delay`; false once `stop` is requested first.
  [[nodiscard]] virtual Task<bool> sleep_for(Millis delay, std::stop_token stop = {}) = 0;
};

}  // namespace ic
