// Reading a request's members, checked as AWS checks them.
#pragma once

#include <cstdint>
#include <expected>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

namespace ic::bench::fast_aws {

// The member `name` if it is a string, else nullptr.
const std::string* string_member(const nlohmann::json& request, const char* name);

// An optional integer member in [low, high]; `fallback` when absent. The error is the message.
std::expected<std::int64_t, std::string> integer_member(const nlohmann::json& request,
                                                        const char* name, std::int64_t low,
                                                        std::int64_t high, std::int64_t fallback);

// Whole decimal text in [low, high] (SQS queue attributes are strings).
std::optional<std::int64_t> parse_integer(std::string_view text, std::int64_t low,
                                          std::int64_t high);

}  // namespace ic::bench::fast_aws
