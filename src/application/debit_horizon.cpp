#include "application/debit_horizon.hpp"

namespace ic::application {

Millis safety_margin(const BankHorizon& horizon) {
  if (!horizon.window) return Millis{0};
  return *horizon.window / 10;
}

bool past_window(const BankHorizon& horizon, Instant first_attempt, Instant now) {
  if (!horizon.window) return false;
  return now + safety_margin(horizon) >= first_attempt + *horizon.window;
}

}  // namespace ic::application
