// JSON written as text. Replies on the hot path (receive, claim, complete) are written this
// way: building an nlohmann document per reply would cost more than the rest of the request.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace ic::bench::fast_aws {

// `text` as a JSON string, quoted and escaped.
void put_string(std::string& out, std::string_view text);
// `name` as an object member's key: the string and its colon.
void put_key(std::string& out, std::string_view name);
void put_number(std::string& out, std::int64_t value);
std::string number_text(std::int64_t value);

}  // namespace ic::bench::fast_aws
