// A Clock that forwards to another clock, as leveldb's EnvWrapper does for Env: a decorator
// (a skewed clock, one that counts reads) derives from it and overrides only what it changes.
//
//   class SkewedClock final : public ForwardingClock {
//    public:
//     SkewedClock(Clock& target, Millis skew) : ForwardingClock(target), skew_(skew) {}
//     Instant now() const override { return ForwardingClock::now() + skew_; }
//    private:
//     Millis skew_;
//   };
#pragma once

#include "core/time.hpp"

namespace ic {

// Thread-safety: that of the target. Ownership: borrows `target`, which must outlive the
// wrapper.
class ForwardingClock : public Clock {
 public:
  explicit ForwardingClock(Clock& target) : target_(target) {}

  [[nodiscard]] Clock& target() const { return target_; }

  [[nodiscard]] Instant now() const override { return target_.now(); }

 private:
  Clock& target_;
};

}  // namespace ic
