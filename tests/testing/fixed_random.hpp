// A Random that always answers one value, so tests pin jitter exactly; any double may be set,
// including the faulty ones (NaN, out of range) that callers must tolerate.
#pragma once

#include <atomic>

#include "core/random.hpp"

namespace ic::testing {

class FixedRandom final : public Random {
 public:
  explicit FixedRandom(double value) : value_(value) {}
  double uniform01() override { return value_.load(); }
  void set(double value) { value_.store(value); }

 private:
  std::atomic<double> value_;
};

}  // namespace ic::testing
