// Applying an UpdateItem's actions (item_update.hpp).
#include "fast_aws/item_update.hpp"

#include <algorithm>
#include <cstddef>
#include <utility>

#include "fast_aws/expression_eval.hpp"

namespace ic::bench::fast_aws {
namespace {

constexpr std::size_t kMaxItemBytes = 400 * 1024;

// ADD of a number: the attribute becomes the addend if absent, else the sum.
std::expected<void, std::string> add_number(Item& next, std::string_view name, const Item* old,
                                            const Value& addend) {
  if (addend.kind != Kind::N) {
    return std::unexpected(
        "Invalid UpdateExpression: Incorrect operand type for operator or function; "
        "operator: ADD, operand type: " +
        std::string(kind_name(addend.kind)));
  }
  const Value* current = old == nullptr ? nullptr : find(*old, name);
  if (current == nullptr) {
    put(next, name, addend);
  } else if (current->kind != Kind::N) {
    return std::unexpected("An operand in the update expression has an incorrect data type");
  } else {
    auto sum = arithmetic(current->text, addend.text, false);
    if (!sum) return std::unexpected("A value provided cannot be converted into a number");
    put(next, name, Value{Kind::N, std::move(*sum)});
  }
  return {};
}

// The checks of the item an update leaves: its size, and its secondary index keys' types.
std::expected<void, std::string> check_item(const Table& table, const Item& next) {
  std::size_t bytes = 0;
  for (const auto& [attribute, value] : next) bytes += attribute.size() + value.text.size();
  if (bytes > kMaxItemBytes) {
    return std::unexpected("Item size has exceeded the maximum allowed size");
  }
  for (const auto& [attribute, kind] : table.index_keys) {
    const Value* value = find(next, attribute);
    if (value == nullptr) continue;
    if (value->kind != kind) {
      return std::unexpected(
          "One or more parameter values were invalid: Type mismatch for Index Key " + attribute +
          " Expected: " + std::string(kind_name(kind)) +
          " Actual: " + std::string(kind_name(value->kind)));
    }
    if (value->text.empty()) {
      return std::unexpected(
          "One or more parameter values are not valid. A value specified for a secondary index "
          "key is not supported. The AttributeValue for a key attribute cannot contain an empty "
          "string value. IndexKey: " +
          attribute);
    }
  }
  return {};
}

}  // namespace

std::expected<Item, std::string> apply_update(const Table& table, const Program& update,
                                              const Item* old, const std::string& key,
                                              const Bindings& bound,
                                              std::vector<std::string_view>& touched) {
  Item next = old != nullptr ? *old : Item{{table.hash_key, Value{table.hash_kind, key}}};
  for (const Action& action : update.actions) {
    const std::string_view name =
        bound.name(update.operands[static_cast<std::size_t>(action.path)].text);
    if (name == table.hash_key) {
      return std::unexpected("One or more parameter values were invalid: Cannot update attribute " +
                             std::string(name) + ". This attribute is part of the key");
    }
    if (std::ranges::find(touched, name) != touched.end()) {
      return std::unexpected(
          "Invalid UpdateExpression: Two document paths overlap with each other; must remove "
          "or rewrite one of these paths; path one: [" +
          std::string(name) + "], path two: [" + std::string(name) + "]");
    }
    touched.push_back(name);
    switch (action.kind) {
      case Action::Kind::Remove:
        erase(next, name);
        break;
      case Action::Kind::Set: {
        auto value = evaluate(update, action.operand, old, bound);
        if (!value) return std::unexpected(value.error());
        if (!*value) {
          return std::unexpected(
              "The provided expression refers to an attribute that does not exist in the item");
        }
        put(next, name, std::move(**value));
        break;
      }
      case Action::Kind::Add: {
        const Value& addend =
            *bound.value(update.operands[static_cast<std::size_t>(action.operand)].text);
        if (auto added = add_number(next, name, old, addend); !added) {
          return std::unexpected(std::move(added.error()));
        }
        break;
      }
    }
  }
  if (auto checked = check_item(table, next); !checked) {
    return std::unexpected(std::move(checked.error()));
  }
  return next;
}

}  // namespace ic::bench::fast_aws
