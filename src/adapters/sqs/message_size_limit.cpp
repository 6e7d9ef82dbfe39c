#include "adapters/sqs/message_size_limit.hpp"

#include <charconv>

#include "adapters/sqs/sqs_client.hpp"
#include "consumer/message_size.hpp"

namespace ic::sqs {

namespace {
constexpr std::string_view kAttribute = "MaximumMessageSize";
}  // namespace

std::expected<std::size_t, Error> parse_maximum_message_size(const QueueAttributes& attributes) {
  const auto it = attributes.find(kAttribute);
  const auto bad = [&](std::string what) {
    return std::unexpected(
        Error{.error_class = ErrorClass::Permanent,
              .code = "MalformedReply",
              .message = "GetQueueAttributes: " + std::string(kAttribute) + " " + std::move(what)});
  };
  if (it == attributes.end()) return bad("missing");
  std::size_t bytes = 0;
  const std::string& text = it->second;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), bytes);
  if (ec != std::errc{} || end != text.data() + text.size() || bytes < consumer::kMinMessageSize ||
      bytes > consumer::kMaxMessageSize) {
    return bad("is not a size from 1024 to 1048576");
  }
  return bytes;
}

std::optional<MessageSizeLimit::Limit> MessageSizeLimit::kept() {
  MutexLock lock(mutex_);
  return cached_;
}

Task<MessageSizeLimit::Limit> MessageSizeLimit::get_through(SqsClient& client) {
  if (auto limit = kept()) co_return std::move(*limit);
  const std::vector<std::string> names{std::string(kAttribute)};
  auto attributes = co_await client.get_queue_attributes(queue_url_, names);
  auto bytes = attributes ? parse_maximum_message_size(*attributes)
                          : Limit(std::unexpected(attributes.error()));
  if (bytes || !bytes.error().retryable()) {
    MutexLock lock(mutex_);
    cached_ = bytes;
  }
  co_return bytes;
}

void MessageSizeLimit::forget() {
  MutexLock lock(mutex_);
  cached_.reset();
}

}  // namespace ic::sqs
