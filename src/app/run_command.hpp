// `charge-recovery run`: wires the adapters into the service and consumes until SIGTERM/SIGINT.
#pragma once

#include "app/settings.hpp"

namespace ic::app {

// Returns the exit code: 0 after a graceful shutdown, non-zero when start-up failed.
[[nodiscard]] int run_consumer(const RunSettings& settings, const aws::EnvLookup& env);

}  // namespace ic::app
