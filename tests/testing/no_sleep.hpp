// A sleeper that returns at once, for tests whose retries and polls must not wait real time:
// blocking (Sleeper) and on a loop (AsyncSleeper) alike.
#pragma once

#include "core/async_sleeper.hpp"
#include "core/time.hpp"

namespace ic::testing {

class NoSleep final : public Sleeper, public AsyncSleeper {
 public:
  void sleep_for(Millis) override {}
  Task<bool> sleep_for(Millis, std::stop_token stop) override { co_return !stop.stop_requested(); }
};

}  // namespace ic::testing
