// Reading a request's members (request_members.hpp).
#include "fast_aws/request_members.hpp"

#include "fast_aws/common.hpp"
#include "fast_aws/json_text.hpp"

namespace ic::bench::fast_aws {

const std::string* string_member(const nlohmann::json& request, const char* name) {
  const auto it = request.find(name);
  return it != request.end() && it->is_string() ? &it->get_ref<const std::string&>() : nullptr;
}

std::expected<std::int64_t, std::string> integer_member(const nlohmann::json& request,
                                                        const char* name, std::int64_t low,
                                                        std::int64_t high, std::int64_t fallback) {
  const auto it = request.find(name);
  if (it == request.end() || it->is_null()) return fallback;
  if (!it->is_number_integer()) {
    return std::unexpected(std::string("Value for parameter ") + name + " is not an integer.");
  }
  const auto value = it->get<std::int64_t>();
  if (value < low || value > high) {
    return std::unexpected("Value " + number_text(value) + " for parameter " + name +
                           " is invalid. Reason: Must be between " + number_text(low) + " and " +
                           number_text(high) + ".");
  }
  return value;
}

std::optional<std::int64_t> parse_integer(std::string_view text, std::int64_t low,
                                          std::int64_t high) {
  const auto value = whole_number<std::int64_t>(text);
  if (!value || *value < low || *value > high) return std::nullopt;
  return value;
}

}  // namespace ic::bench::fast_aws
