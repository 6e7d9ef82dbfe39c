// The listener container's intake gate: consulted before every ReceiveMessage, so that a
// process whose dependencies are down stops taking messages (no receive count is spent while it
// could not handle them) and takes exactly one when it is time to probe (docs/design.md §3,
// "Dependency outages"). The container knows nothing about circuits; the application decides.
#pragma once

#include <cstddef>

#include "core/time.hpp"

namespace ic::consumer {

struct IntakeDecision {
  // At most this many messages in the coming receive (the container still asks for no more
  // than its free slots). 0: paused, no receive now.
  int max_messages = 10;
  // Paused: look again after at most this long (a stop or a freed slot also wakes the
  // receiver).
  Millis recheck{200};
  // This receive fetches the message a probe is made with.
  bool probe = false;
};

// Thread-safety: called from every receiver thread concurrently.
// Ownership: borrowed by the container; must outlive it.
class IntakeGate {
 public:
  virtual ~IntakeGate() = default;
  [[nodiscard]] virtual IntakeDecision before_receive() = 0;
  // After a receive the gate allowed: how many messages it brought (0 also after an error).
  virtual void after_receive(const IntakeDecision& decision, std::size_t received) = 0;
};

}  // namespace ic::consumer
