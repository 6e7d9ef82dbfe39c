// An operator command's Console that keeps every line, for the commands' unit tests.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "application/operations/ports.hpp"

namespace ic::testing {

class StringConsole final : public application::Console {
 public:
  std::vector<std::string> results;
  std::vector<std::string> notes;
  void result(std::string_view line) override { results.emplace_back(line); }
  void note(std::string_view line) override { notes.emplace_back(line); }
  [[nodiscard]] nlohmann::json result_json(std::size_t i) const {
    return nlohmann::json::parse(results.at(i));
  }
};

}  // namespace ic::testing
