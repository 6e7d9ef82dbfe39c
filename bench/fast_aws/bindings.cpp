// Binding a request's placeholders (bindings.hpp).
#include "fast_aws/bindings.hpp"

#include <algorithm>

namespace ic::bench::fast_aws {

std::string_view Bindings::name(std::string_view path) const {
  if (!path.starts_with('#')) return path;
  for (const auto& [placeholder, name] : names) {
    if (placeholder == path) return name;
  }
  return path;  // not reached: every placeholder is checked to be bound first
}

const Value* Bindings::value(std::string_view placeholder) const {
  for (const auto& [name, value] : values) {
    if (name == placeholder) return &value;
  }
  return nullptr;
}

std::expected<Bindings, std::string> bind(const nlohmann::json& request,
                                          std::initializer_list<const Program*> programs) {
  Bindings bound;
  if (const auto names = request.find("ExpressionAttributeNames");
      names != request.end() && !names->is_null()) {
    if (!names->is_object()) return std::unexpected("ExpressionAttributeNames must be a map");
    for (const auto& [placeholder, name] : names->items()) {
      if (!name.is_string())
        return std::unexpected("ExpressionAttributeNames contains invalid value");
      bound.names.emplace_back(placeholder, name.get<std::string>());
    }
  }
  if (const auto values = request.find("ExpressionAttributeValues");
      values != request.end() && !values->is_null()) {
    if (!values->is_object()) return std::unexpected("ExpressionAttributeValues must be a map");
    for (const auto& [placeholder, raw] : values->items()) {
      auto value = value_of(raw);
      if (!value) {
        return std::unexpected("ExpressionAttributeValues contains invalid value: " +
                               value.error() + " for key " + placeholder);
      }
      bound.values.emplace_back(placeholder, std::move(*value));
    }
  }
  const auto used = [&](auto member, std::string_view placeholder) {
    return std::ranges::any_of(programs, [&](const Program* program) {
      return program != nullptr &&
             std::ranges::find(program->*member, placeholder) != (program->*member).end();
    });
  };
  for (const Program* program : programs) {
    if (program == nullptr) continue;
    for (const auto& name : program->names) {
      if (std::ranges::find(bound.names, name, &std::pair<std::string, std::string>::first) ==
          bound.names.end()) {
        return std::unexpected(
            "Invalid expression: An expression attribute name used in the document path is "
            "not defined; attribute name: " +
            name);
      }
    }
    for (const auto& value : program->values) {
      if (bound.value(value) == nullptr) {
        return std::unexpected(
            "Invalid expression: An expression attribute value used in expression is not "
            "defined; attribute value: " +
            value);
      }
    }
  }
  for (const auto& [placeholder, name] : bound.names) {
    if (!used(&Program::names, placeholder)) {
      return std::unexpected(
          "Value provided in ExpressionAttributeNames unused in expressions: keys: {" +
          placeholder + "}");
    }
  }
  for (const auto& [placeholder, value] : bound.values) {
    if (!used(&Program::values, placeholder)) {
      return std::unexpected(
          "Value provided in ExpressionAttributeValues unused in expressions: keys: {" +
          placeholder + "}");
    }
  }
  return bound;
}

}  // namespace ic::bench::fast_aws
