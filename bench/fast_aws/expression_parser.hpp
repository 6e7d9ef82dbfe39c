// DynamoDB's condition and update expressions, compiled to a Program (expression.hpp).
// Conditions of comparisons (= <> < <= > >=), attribute_exists, attribute_not_exists and
// begins_with joined by AND, OR, NOT and parentheses; updates of SET (values, paths,
// if_not_exists, + and -), REMOVE and ADD (numbers). That covers every shape
// src/adapters/dynamodb/dynamodb_codec.cpp sends (claim, complete/fail, extend/release), and a
// shape it does not cover is refused with a ValidationException, never guessed at.
#pragma once

#include <expected>
#include <string>
#include <string_view>

#include "fast_aws/expression.hpp"

namespace ic::bench::fast_aws {

// The error is a ValidationException's message.
std::expected<Program, std::string> parse_condition(std::string_view text);
std::expected<Program, std::string> parse_update(std::string_view text);

}  // namespace ic::bench::fast_aws
