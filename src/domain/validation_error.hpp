// Why a value was refused: the field and the rule, worded for the DLQ's failureDetail.
#pragma once

#include <string>

namespace ic::domain {

struct ValidationError {
  std::string field;
  std::string rule;

  [[nodiscard]] std::string detail() const { return field + ": " + rule; }
  friend bool operator==(const ValidationError&, const ValidationError&) = default;
};

}  // namespace ic::domain
