// Keeps a claim alive while a long effect runs (docs/design.md §3: extend at half the lease).
#pragma once

#include <functional>

#include "core/time.hpp"

namespace ic::consumer {

// Implemented by whoever owns the delivery (the queue container), used by the handler.
// The handler calls start() right after it acquires a claim and stop() the moment the outcome
// is decided, before it writes the final state.
// `extend_claim` extends the claim by one lease and returns false once the claim is no longer
// held (fenced) or cannot be extended; the owner then stops extending and also stops
// extending the message's visibility.
// Thread-safety: start/stop are called from the handler's thread; `extend_claim` may be called
// from the owner's timer thread and must be thread-safe. stop() must not return while an
// `extend_claim` call is running, because `extend_claim` refers to the handler's stack.
class LeaseHeartbeat {
 public:
  virtual ~LeaseHeartbeat() = default;
  virtual void start(std::function<bool()> extend_claim, Millis lease) = 0;
  virtual void stop() = 0;
};

// For callers that run effects shorter than half a lease (tests, batch tools).
class NoHeartbeat final : public LeaseHeartbeat {
 public:
  void start(std::function<bool()>, Millis) override {}
  void stop() override {}
};

}  // namespace ic::consumer
