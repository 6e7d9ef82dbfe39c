// When to look again at a copy refused as DUPLICATE_IN_PROGRESS by a holder in another process
// (docs/design.md §3): soon after the holder has probably finished, judged from how long this
// process's own effects take, later the longer the holder has already taken, but never past
// the holder's lease. A re-check is a claim attempt
// like any delivery: it acks only on a final record, never on seeing IN_PROGRESS again
// (docs/model-check.md, broken:ack_recheck).
//
//   EffectDurations durations;            // shared by every worker of the service
//   durations.record(Millis{30});         // after each effect, claim to final write
//   Millis after = recheck_delay({.now = now, .lease_until = rec.lease_until, .lease = lease,
//                                 .typical_effect = durations.p90()});
#pragma once

#include <array>
#include <cstddef>
#include <optional>

#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic::application {

// The last kWindow effect durations, for a cheap high percentile.
// Thread-safety: record() and p90() may be called concurrently (one short mutex hold each).
class EffectDurations {
 public:
  static constexpr std::size_t kWindow = 128;
  // Fewer samples than this say too little: p90() is then empty.
  static constexpr std::size_t kMinSamples = 8;

  void record(Millis duration);
  [[nodiscard]] std::optional<Millis> p90() const;

 private:
  mutable Mutex mutex_;
  std::array<Millis, kWindow> samples_ GUARDED_BY(mutex_){};
  std::size_t count_ GUARDED_BY(mutex_) = 0;  // samples ever recorded
};

struct RecheckInput {
  Instant now;
  Instant lease_until;  // the holder's, from the refusing record
  Millis lease;         // the lease every holder takes: lease_until - lease ~ its claim time
  std::optional<Millis> typical_effect;  // EffectDurations::p90(); empty: no estimate yet
};

// The shortest re-check: SQS visibility has whole-second granularity.
inline constexpr Millis kMinRecheck{1000};

// Without an estimate, the holder's remaining lease (the most conservative schedule). With one:
// the time the holder probably still needs by that estimate, or half the time it has already
// taken if that is longer, in whole seconds rounded down, at least kMinRecheck, capped at the
// remaining lease. Pure.
[[nodiscard]] Millis recheck_delay(const RecheckInput& input);

}  // namespace ic::application
