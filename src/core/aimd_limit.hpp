// An adaptive concurrency limit in the spirit of Netflix's concurrency-limits AIMD limiter:
// additive increase (+1 once `limit` calls succeeded while the limit was nearly used), and
// multiplicative decrease (x backoff) on a failure or a call slower than `slow_call`, once per
// congestion event: as TCP cuts its window once per loss episode (RFC 6582's `recover`), only a
// call admitted after the last decrease decreases again. Calls already in flight at a decrease
// were admitted at the old level and carry old news; were each of them to cut, a burst admitted
// together (a thousand TLS handshakes at start-up) would take the limit to its floor. The limit
// lives in [min, max]. After restart() (a circuit closed) the admitted limit starts at `min`
// and grows linearly to the AIMD value over `ramp`: slow start, so a recovering dependency is
// not hit by every worker at once.
//
//   AimdLimit limit({.min = 1, .max = 32}, clock);
//   if (const std::optional<AimdLimit::Ticket> ticket = limit.try_acquire()) {
//     call();
//     limit.release(*ticket, latency, failed);
//   }
//
// Pure: no waiting here (the caller decides how to wait; application/bank_pacer queues).
// Thread-safety: every member may be called concurrently. Ownership: the clock is borrowed; a
// ticket is the caller's, given back once, to the limit that issued it.
#pragma once

#include <cstdint>
#include <optional>

#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic {

struct AimdConfig {
  int min = 1;
  int max = 32;
  Millis slow_call{2000};  // a call at least this slow counts as a sign of overload
  double backoff = 0.75;   // multiplicative decrease
  Millis ramp{5000};       // slow start after restart()
};

class AimdLimit {
 public:
  // One admitted call's slot. `epoch` counts the decreases (and restarts) before its admission:
  // its failure or slowness decreases the limit only if nothing has since.
  struct Ticket {
    std::uint64_t epoch = 0;
  };

  AimdLimit(AimdConfig config, const Clock& clock);

  // Takes a slot when fewer than limit() calls are in flight.
  [[nodiscard]] std::optional<Ticket> try_acquire();
  // Gives the slot back with what the call showed. A failed or slow call admitted before the
  // last decrease changes nothing: neither a decrease nor a success.
  void release(Ticket ticket, Millis latency, bool failed);
  // Slow start (a circuit just closed): the estimate goes back to `max`, and the admitted limit
  // grows linearly from `min` to it over `ramp`. Calls admitted before it carry the outage's
  // news: they decrease nothing.
  void restart();

  // The limit admitted now: the AIMD value, capped by the ramp while one runs.
  [[nodiscard]] int limit() const;
  [[nodiscard]] int in_flight() const;
  // The AIMD value itself, without the ramp.
  [[nodiscard]] double estimate() const;
  // While the ramp holds limit() below the AIMD value: when it admits one more call (never
  // sooner than a millisecond from now). A ramp grows with time, not with releases, so a caller
  // waiting for a slot needs this to know when to look again.
  [[nodiscard]] std::optional<Instant> next_growth() const;

 private:
  [[nodiscard]] int limit_at(Instant now) const REQUIRES(mutex_);

  const AimdConfig config_;
  const Clock& clock_;
  mutable Mutex mutex_;
  double estimate_ GUARDED_BY(mutex_);
  std::uint64_t epoch_ GUARDED_BY(mutex_) = 0;  // decreases and restarts so far
  int successes_ GUARDED_BY(mutex_) = 0;
  int in_flight_ GUARDED_BY(mutex_) = 0;
  bool ramping_ GUARDED_BY(mutex_) = false;
  Instant ramp_start_ GUARDED_BY(mutex_){};
};

}  // namespace ic
