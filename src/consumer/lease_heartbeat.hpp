// Keeps a claim alive while a long effect runs (docs/design.md §3: extend at half the lease).
#pragma once

#include <functional>

#include "core/time.hpp"

namespace ic::consumer {

// What one attempt to extend the claim by a lease found.
enum class ClaimExtension {
  Extended,    // the claim is ours for one more lease
  Lost,        // fenced: someone else holds it now, so extending again is pointless
  Unanswered,  // the store failed (after its own retries): the claim stays ours until its
               // current lease ends, so the owner tries again well before that
};

// Implemented by whoever owns the delivery (the queue container), used by the handler.
// The handler calls start() right after it acquires a claim and stop() the moment the outcome
// is decided, before it writes the final state.
// `extend_claim` extends the claim by one lease. After Lost the owner stops extending the claim
// and the message's visibility; after Unanswered it leaves the visibility alone and tries the
// claim again sooner than half a lease, since one throttled or timed-out write must not cost
// the claim.
// Thread-safety: start/stop are called from the handler's thread; `extend_claim` may be called
// from the owner's timer thread and must be thread-safe. stop() must not return while an
// `extend_claim` call is running, because `extend_claim` refers to the handler's stack.
class LeaseHeartbeat {
 public:
  virtual ~LeaseHeartbeat() = default;
  virtual void start(std::function<ClaimExtension()> extend_claim, Millis lease) = 0;
  virtual void stop() = 0;
};

}  // namespace ic::consumer
