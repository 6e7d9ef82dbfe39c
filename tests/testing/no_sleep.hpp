// A Sleeper that returns at once, for tests whose retries and polls must not wait real time.
#pragma once

#include "core/time.hpp"

namespace ic::testing {

class NoSleep final : public Sleeper {
 public:
  void sleep_for(Millis) override {}
};

}  // namespace ic::testing
