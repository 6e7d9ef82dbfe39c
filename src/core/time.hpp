// Time vocabulary of the claim protocol: epoch milliseconds, as stored in the table.
#pragma once

#include <chrono>

namespace ic {

using Millis = std::chrono::milliseconds;
using Instant = std::chrono::sys_time<Millis>;

// Source of "now" for lease decisions.
// Thread-safety: implementations must be safe to call from any thread.
// Ownership: injected by reference; the owner outlives every user.
class Clock {
 public:
  virtual ~Clock() = default;
  [[nodiscard]] virtual Instant now() const = 0;
};

}  // namespace ic
