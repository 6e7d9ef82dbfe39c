// Evaluating compiled expressions (expression_eval.hpp).
#include "fast_aws/expression_eval.hpp"

#include <cstddef>
#include <utility>

namespace ic::bench::fast_aws {
namespace {

const Operand& operand_at(const Program& program, int index) {
  return program.operands[static_cast<std::size_t>(index)];
}

// The item's attribute that a path operand names; nullptr if it has none, or there is no item.
const Value* attribute(const Item* item, const Operand& path, const Bindings& bound) {
  return item == nullptr ? nullptr : find(*item, bound.name(path.text));
}

// The value an operand of a condition stands for (conditions have no arithmetic).
const Value* resolve(const Program& program, int index, const Item* item, const Bindings& bound) {
  const Operand& operand = operand_at(program, index);
  if (operand.kind == Operand::Kind::Value) return bound.value(operand.text);
  return attribute(item, operand, bound);
}

}  // namespace

bool holds(const Program& program, int index, const Item* item, const Bindings& bound) {
  const Condition& condition = program.conditions[static_cast<std::size_t>(index)];
  switch (condition.kind) {
    case Condition::Kind::Or:
      return holds(program, condition.left, item, bound) ||
             holds(program, condition.right, item, bound);
    case Condition::Kind::And:
      return holds(program, condition.left, item, bound) &&
             holds(program, condition.right, item, bound);
    case Condition::Kind::Not:
      return !holds(program, condition.left, item, bound);
    case Condition::Kind::Exists:
      return resolve(program, condition.left, item, bound) != nullptr;
    case Condition::Kind::NotExists:
      return resolve(program, condition.left, item, bound) == nullptr;
    case Condition::Kind::BeginsWith: {
      const Value* a = resolve(program, condition.left, item, bound);
      const Value* prefix = resolve(program, condition.right, item, bound);
      return a != nullptr && prefix != nullptr && a->kind == prefix->kind &&
             (a->kind == Kind::S || a->kind == Kind::B) && a->text.starts_with(prefix->text);
    }
    case Condition::Kind::Compare: {
      const Value* a = resolve(program, condition.left, item, bound);
      const Value* b = resolve(program, condition.right, item, bound);
      const std::string& op = condition.op;
      // A missing attribute equals nothing, so "<>" holds for it, as NOT (a = b) would.
      if (op == "=") return a != nullptr && b != nullptr && equal(*a, *b);
      if (op == "<>") return a == nullptr || b == nullptr || !equal(*a, *b);
      if (a == nullptr || b == nullptr) return false;
      const auto order = compare(*a, *b);
      if (!order) return false;
      if (op == "<") return *order < 0;
      if (op == "<=") return *order <= 0;
      if (op == ">") return *order > 0;
      return *order >= 0;
    }
  }
  return false;
}

std::expected<std::optional<Value>, std::string> evaluate(const Program& program, int index,
                                                          const Item* old, const Bindings& bound) {
  const Operand& operand = operand_at(program, index);
  switch (operand.kind) {
    case Operand::Kind::Value:
      return std::optional<Value>(*bound.value(operand.text));
    case Operand::Kind::Path: {
      const Value* value = attribute(old, operand, bound);
      return value == nullptr ? std::nullopt : std::optional<Value>(*value);
    }
    case Operand::Kind::IfNotExists: {
      const Value* value = attribute(old, operand_at(program, operand.left), bound);
      if (value != nullptr) return std::optional<Value>(*value);
      return evaluate(program, operand.right, old, bound);
    }
    case Operand::Kind::Plus:
    case Operand::Kind::Minus: {
      auto a = evaluate(program, operand.left, old, bound);
      auto b = evaluate(program, operand.right, old, bound);
      if (!a || !b) return std::unexpected(!a ? a.error() : b.error());
      if (!*a || !*b) {
        return std::unexpected(
            "The provided expression refers to an attribute that does not exist in the item");
      }
      if ((*a)->kind != Kind::N || (*b)->kind != Kind::N) {
        return std::unexpected("An operand in the update expression has an incorrect data type");
      }
      auto result = arithmetic((*a)->text, (*b)->text, operand.kind == Operand::Kind::Minus);
      if (!result) return std::unexpected("A value provided cannot be converted into a number");
      return std::optional<Value>(Value{Kind::N, std::move(*result)});
    }
  }
  return std::nullopt;
}

}  // namespace ic::bench::fast_aws
