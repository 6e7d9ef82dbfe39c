// Receiving SQS messages: ReceiveMessage, its long polls and the messages it writes.
#include <algorithm>
#include <chrono>

#include "fast_aws/json_text.hpp"
#include "fast_aws/receipt_handle.hpp"
#include "fast_aws/request_members.hpp"
#include "fast_aws/sqs.hpp"
#include "fast_aws/sqs_faults.hpp"

namespace ic::bench::fast_aws {
namespace {

using nlohmann::json;

// Which of a receive's names ask for `name`: "All", ".*", the name, or a "prefix.*".
bool wanted(const std::vector<std::string_view>& names, std::string_view name) {
  return std::ranges::any_of(names, [&](std::string_view pattern) {
    if (pattern == "All" || pattern == ".*" || pattern == name) return true;
    return pattern.ends_with(".*") && name.starts_with(pattern.substr(0, pattern.size() - 1));
  });
}

std::vector<std::string_view> names_of(const json& request, const char* member) {
  std::vector<std::string_view> out;
  const auto it = request.find(member);
  if (it == request.end() || !it->is_array()) return out;
  for (const auto& name : *it) {
    if (name.is_string()) out.push_back(name.get_ref<const std::string&>());
  }
  return out;
}

void write_message(std::string& body, const Queue& queue, std::uint64_t seq, const Message& message,
                   const std::vector<std::string_view>& system,
                   const std::vector<std::string_view>& custom) {
  body += R"({"MessageId":)";
  put_string(body, message.id);
  body += R"(,"ReceiptHandle":)";
  put_string(body, receipt_handle(queue, seq, message.receives));
  body += R"(,"MD5OfBody":)";
  put_string(body, message.md5);
  body += R"(,"Body":)";
  put_string(body, message.body);
  const std::pair<std::string_view, std::string> attributes[] = {
      {"ApproximateFirstReceiveTimestamp", number_text(message.first_receive_ms)},
      {"ApproximateReceiveCount", number_text(message.receives)},
      {"SenderId", "AIDAFASTAWSBENCHSENDER"},
      {"SentTimestamp", number_text(message.sent_ms)}};
  bool first = true;
  for (const auto& [name, value] : attributes) {
    if (!wanted(system, name)) continue;
    body += first ? R"(,"Attributes":{)" : ",";
    first = false;
    put_key(body, name);
    put_string(body, value);
  }
  if (!first) body += '}';
  first = true;
  for (const auto& [name, value] : message.attributes) {
    if (!wanted(custom, name)) continue;
    body += first ? R"(,"MessageAttributes":{)" : ",";
    first = false;
    put_key(body, name);
    body += value;
  }
  if (!first) body += '}';
  body += '}';
}

}  // namespace

std::optional<Reply> Sqs::receive(const json& request, Request& http) {
  const std::scoped_lock lock(mutex_);
  auto queue = queue_of(request);
  if (!queue) return std::move(queue.error());
  Queue& q = **queue;
  auto max = integer_member(request, "MaxNumberOfMessages", 1, 10, 1);
  auto visibility = integer_member(request, "VisibilityTimeout", 0, 43200, q.visibility_timeout);
  auto wait = integer_member(request, "WaitTimeSeconds", 0, 20, q.wait_seconds);
  for (const auto* checked : {&max, &visibility, &wait}) {
    if (!*checked) return sqs_error(kInvalidParameter, checked->error());
  }
  const auto now = Steady::now();
  if (!http.poll_deadline) http.poll_deadline = now + std::chrono::seconds(*wait);
  promote(q, now);
  if (q.count(MessageState::Visible) == 0 && now < *http.poll_deadline && !stopping_) {
    // Suspended under the lock, so that no sender can resume it before it is suspended.
    q.waiters.push_back(&http);
    MHD_suspend_connection(http.connection);
    timers_changed_.notify_one();
    return std::nullopt;
  }
  std::vector<std::string_view> system = names_of(request, "AttributeNames");
  for (auto name : names_of(request, "MessageSystemAttributeNames")) system.push_back(name);
  const std::vector<std::string_view> custom = names_of(request, "MessageAttributeNames");
  const std::int64_t now_ms = epoch_ms();
  std::string body;
  int taken = 0;
  while (taken < *max && !q.visible.empty()) {
    const std::uint64_t seq = q.visible.front();
    q.visible.pop_front();
    const auto it = q.messages.find(seq);
    if (it == q.messages.end() || it->second.state != MessageState::Visible) continue;
    Message& message = it->second;
    ++message.receives;
    if (message.first_receive_ms == 0) message.first_receive_ms = now_ms;
    ++message.generation;
    q.move(message, MessageState::InFlight);
    q.timers.push({now + std::chrono::seconds(*visibility), seq, message.generation});
    body += taken == 0 ? R"({"Messages":[)" : ",";
    ++taken;
    write_message(body, q, seq, message, system, custom);
  }
  body += taken == 0 ? "{}" : "]}";
  return ok(std::move(body));
}

}  // namespace ic::bench::fast_aws
