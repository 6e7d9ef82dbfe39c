#include "adapters/sqs/queue_health.hpp"

#include <charconv>
#include <nlohmann/json.hpp>

namespace ic::sqs {
namespace {

std::optional<std::int64_t> number(std::string_view text) {
  std::int64_t value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (text.empty() || ec != std::errc{} || ptr != end || value < 0) return std::nullopt;
  return value;
}

std::optional<std::uint64_t> count(const QueueAttributes& attributes, std::string_view name) {
  const auto it = attributes.find(name);
  if (it == attributes.end()) return std::nullopt;
  const auto value = number(it->second);
  if (!value) return std::nullopt;
  return static_cast<std::uint64_t>(*value);
}

// {"deadLetterTargetArn": "...", "maxReceiveCount": "10"}; SQS writes the count as a string,
// emulators sometimes as a number.
std::optional<std::int64_t> max_receive_count(std::string_view redrive_policy) {
  const auto policy = nlohmann::json::parse(redrive_policy, nullptr, /*allow_exceptions=*/false);
  if (!policy.is_object()) return std::nullopt;
  const auto it = policy.find("maxReceiveCount");
  if (it == policy.end()) return std::nullopt;
  if (it->is_number_integer()) return it->get<std::int64_t>();
  if (it->is_string()) return number(it->get_ref<const std::string&>());
  return std::nullopt;
}

}  // namespace

QueueHealth decode_queue_health(const QueueAttributes& attributes) {
  QueueHealth out;
  out.depth = {.visible = count(attributes, "ApproximateNumberOfMessages"),
               .in_flight = count(attributes, "ApproximateNumberOfMessagesNotVisible"),
               .delayed = count(attributes, "ApproximateNumberOfMessagesDelayed")};
  if (const auto timeout = count(attributes, "VisibilityTimeout")) {
    out.settings.visibility_timeout = std::chrono::seconds(*timeout);
  }
  if (const auto it = attributes.find("RedrivePolicy");
      it != attributes.end() && !it->second.empty()) {
    out.settings.has_redrive_policy = true;
    out.settings.max_receive_count = max_receive_count(it->second);
  }
  return out;
}

Task<std::expected<QueueHealth, Error>> read_queue_health(SqsClient& sqs,
                                                          std::string_view queue_url) {
  const std::vector<std::string> names{
      "ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible",
      "ApproximateNumberOfMessagesDelayed", "VisibilityTimeout", "RedrivePolicy"};
  auto attributes = co_await sqs.get_queue_attributes(queue_url, names);
  if (!attributes) co_return std::unexpected(attributes.error());
  co_return decode_queue_health(*attributes);
}

}  // namespace ic::sqs
