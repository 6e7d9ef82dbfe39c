// Overloaded picks the lambda for the alternative a variant holds.
#include "core/overloaded.hpp"

#include <gtest/gtest.h>

#include <string>
#include <variant>

namespace ic {
namespace {

TEST(Overloaded, VisitsTheMatchingLambda) {
  const auto describe = Overloaded{[](int i) { return "int " + std::to_string(i); },
                                   [](const std::string& s) { return "string " + s; }};
  EXPECT_EQ(std::visit(describe, std::variant<int, std::string>{3}), "int 3");
  EXPECT_EQ(std::visit(describe, std::variant<int, std::string>{"x"}), "string x");
}

}  // namespace
}  // namespace ic
