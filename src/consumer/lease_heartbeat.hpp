// Keeps a claim alive while a long effect runs (docs/design.md §3: extend at half the lease).
#pragma once

#include <functional>

#include "core/task.hpp"
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
// The handler calls start() right after it acquires a claim and awaits stop() the moment the
// outcome is decided, before it writes the final state.
// `extend_claim` extends the claim by one lease. After Lost the owner stops extending the claim
// and the message's visibility; after Unanswered it leaves the visibility alone and tries the
// claim again sooner than half a lease, since one throttled or timed-out write must not cost
// the claim.
// Thread-safety: everything runs on the delivery's event loop: start() and stop() from the
// handler's task, the extensions as tasks of their own. stop() finishes only once no
// `extend_claim` task runs and none will. `extend_claim` owns what it uses: a handler that
// throws never reaches its stop(), and the owner's stop() comes after the handler's frame is
// gone, so an extension in flight would outlive what it referred to there.
class LeaseHeartbeat {
 public:
  virtual ~LeaseHeartbeat() = default;
  virtual void start(std::function<Task<ClaimExtension>()> extend_claim, Millis lease) = 0;
  [[nodiscard]] virtual Task<void> stop() = 0;
};

}  // namespace ic::consumer
