// Predicates over a handler's Disposition, so a test states the expected queue action in one
// expression (`EXPECT_TRUE(is_retry(d, "in_progress"))`).
#pragma once

#include <string_view>
#include <variant>

#include "consumer/disposition.hpp"

namespace ic::testing {

[[nodiscard]] inline bool is_retry(const consumer::Disposition& d, std::string_view reason) {
  const auto* retry = std::get_if<consumer::RetryLater>(&d);
  return retry != nullptr && retry->reason == reason;
}

[[nodiscard]] inline bool is_dead_letter(const consumer::Disposition& d, std::string_view reason) {
  const auto* dead = std::get_if<consumer::DeadLetter>(&d);
  return dead != nullptr && dead->reason == reason;
}

}  // namespace ic::testing
