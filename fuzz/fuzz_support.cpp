#include "fuzz_support.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>

namespace ic::fuzz {
namespace {

constexpr std::string_view kSeparator = "\n====\n";

std::string_view next_line(std::string_view& text) {
  const auto end = text.find('\n');
  const auto line = text.substr(0, end);
  text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  return line;
}

std::string lower(std::string_view text) {
  std::string out(text);
  std::ranges::transform(out, out.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
  while (!text.empty() && (text.back() == ' ' || text.back() == '\r')) text.remove_suffix(1);
  return text;
}

Reply parse_reply(std::string_view text) {
  const auto status_line = trim(next_line(text));
  if (status_line == "C" || status_line == "T" || status_line == "D") {
    const auto failure = status_line == "C"   ? http::TransportFailure::CouldNotConnect
                         : status_line == "T" ? http::TransportFailure::TimeoutAfterSend
                                              : http::TransportFailure::Interrupted;
    return std::unexpected(http::TransportError{.failure = failure, .detail = "scripted"});
  }
  http::HttpResponse response{.status = 200};
  long status = 0;
  const auto [end, ec] =
      std::from_chars(status_line.data(), status_line.data() + status_line.size(), status);
  if (ec == std::errc{} && end == status_line.data() + status_line.size()) response.status = status;
  while (!text.empty()) {
    const auto line = next_line(text);
    if (trim(line).empty()) break;
    const auto colon = line.find(':');
    if (colon == std::string_view::npos) continue;
    response.headers.emplace_back(lower(trim(line.substr(0, colon))),
                                  std::string(trim(line.substr(colon + 1))));
  }
  response.body = std::string(text);
  return response;
}

}  // namespace

std::deque<Reply> parse_replies(std::string_view script) {
  std::deque<Reply> replies;
  while (!script.empty()) {
    const auto end = script.find(kSeparator);
    replies.push_back(parse_reply(script.substr(0, end)));
    script.remove_prefix(end == std::string_view::npos ? script.size() : end + kSeparator.size());
  }
  return replies;
}

}  // namespace ic::fuzz
