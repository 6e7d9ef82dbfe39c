// A compiled DynamoDB expression: operands and conditions refer to each other by index.
// Placeholders (#name, :value) stay as text and are bound per request (bindings.hpp), so one
// compiled expression serves every request that sends its text.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace ic::bench::fast_aws {

struct Operand {
  enum class Kind : std::uint8_t { Path, Value, IfNotExists, Plus, Minus } kind;
  std::string text;  // Path: the name or #placeholder; Value: the :placeholder
  int left = -1;     // IfNotExists: the path; Plus/Minus: the operands
  int right = -1;    // IfNotExists: the default
};

struct Condition {
  enum class Kind : std::uint8_t { Or, And, Not, Compare, Exists, NotExists, BeginsWith } kind;
  std::string op;  // Compare's operator
  int left = -1;   // Or/And/Not: conditions; the others: operands
  int right = -1;
};

struct Action {
  enum class Kind : std::uint8_t { Set, Remove, Add } kind;
  int path = -1;     // a Path operand
  int operand = -1;  // Set: the new value; Add: the :placeholder
};

struct Program {
  std::vector<Operand> operands;
  std::vector<Condition> conditions;
  int root = -1;  // the condition
  std::vector<Action> actions;
  std::vector<std::string> names;   // every #placeholder used
  std::vector<std::string> values;  // every :placeholder used
};

}  // namespace ic::bench::fast_aws
