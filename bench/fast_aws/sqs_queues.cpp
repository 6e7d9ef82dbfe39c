// SQS queues and their attributes: CreateQueue, GetQueueUrl, GetQueueAttributes and
// SetQueueAttributes.
#include <algorithm>
#include <cctype>
#include <iterator>

#include "fast_aws/common.hpp"
#include "fast_aws/json_text.hpp"
#include "fast_aws/request_members.hpp"
#include "fast_aws/sqs.hpp"
#include "fast_aws/sqs_faults.hpp"

namespace ic::bench::fast_aws {
namespace {

using nlohmann::json;

// Queue attributes a client may set: numbers with AWS's bounds and defaults.
struct NumericAttribute {
  std::string_view name;
  std::int64_t low;
  std::int64_t high;
  std::int64_t fallback;
};
constexpr NumericAttribute kNumericAttributes[] = {
    {"DelaySeconds", 0, 900, 0},
    {"MaximumMessageSize", 1024, 1048576, 262144},
    {"MessageRetentionPeriod", 60, 1209600, 345600},
    {"ReceiveMessageWaitTimeSeconds", 0, 20, 0},
    {"VisibilityTimeout", 0, 43200, 30},
};
// Stored and reported, not interpreted: nothing the bench drives depends on them.
constexpr std::string_view kOpaqueAttributes[] = {"Policy", "RedriveAllowPolicy", "KmsMasterKeyId",
                                                  "KmsDataKeyReusePeriodSeconds",
                                                  "SqsManagedSseEnabled"};

bool valid_queue_name(std::string_view name) {
  return !name.empty() && name.size() <= 80 && std::ranges::all_of(name, [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) != 0 || c == '-' || c == '_';
  });
}

// AWS reports the policy as {"deadLetterTargetArn":..,"maxReceiveCount":N} whatever the
// spelling it was given in.
std::expected<std::string, std::string> redrive_policy(const std::string& text) {
  const auto policy = json::parse(text, nullptr, /*allow_exceptions=*/false);
  const std::string invalid = "Value " + text + " for parameter RedrivePolicy is invalid.";
  if (!policy.is_object()) return std::unexpected(invalid);
  const std::string* arn = string_member(policy, "deadLetterTargetArn");
  const auto count = policy.find("maxReceiveCount");
  std::optional<std::int64_t> receives;
  if (count != policy.end() && count->is_number_integer()) {
    receives = count->get<std::int64_t>();
    if (*receives < 1 || *receives > 1000) receives.reset();
  } else if (count != policy.end() && count->is_string()) {
    receives = parse_integer(count->get_ref<const std::string&>(), 1, 1000);
  }
  if (arn == nullptr || !receives) return std::unexpected(invalid);
  std::string out = R"({"deadLetterTargetArn":)";
  put_string(out, *arn);
  out += R"(,"maxReceiveCount":)";
  put_number(out, *receives);
  out += '}';
  return out;
}

// Validates and applies `attributes` (a JSON object of strings) to `queue`; with
// `only_compare`, reports instead whether they all equal the queue's (CreateQueue of an
// existing name).
std::expected<bool, Reply> apply_attributes(Queue& queue, const json& attributes,
                                            bool only_compare) {
  if (!attributes.is_object()) {
    return std::unexpected(sqs_error(kInvalidParameter, "Attributes must be a map."));
  }
  bool same = true;
  std::vector<std::pair<std::string, std::string>> accepted;
  for (const auto& [name, raw] : attributes.items()) {
    if (!raw.is_string()) {
      return std::unexpected(
          sqs_error(kInvalidAttributeValue, "Invalid value for the parameter " + name + "."));
    }
    std::string value = raw.get<std::string>();
    const auto numeric = std::ranges::find(kNumericAttributes, name, &NumericAttribute::name);
    if (numeric != std::end(kNumericAttributes)) {
      if (!parse_integer(value, numeric->low, numeric->high)) {
        return std::unexpected(
            sqs_error(kInvalidAttributeValue, "Invalid value for the parameter " + name + "."));
      }
    } else if (name == "RedrivePolicy") {
      if (!value.empty()) {
        auto normalised = redrive_policy(value);
        if (!normalised)
          return std::unexpected(sqs_error(kInvalidAttributeValue, normalised.error()));
        value = std::move(*normalised);
      }
    } else if (name == "FifoQueue" || name == "ContentBasedDeduplication") {
      if (value == "true") {
        return std::unexpected(sqs_error(kInvalidAttributeValue, "fast_aws has no FIFO queues."));
      }
      continue;
    } else if (std::ranges::find(kOpaqueAttributes, name) == std::end(kOpaqueAttributes)) {
      return std::unexpected(sqs_error(kInvalidAttributeName, "Unknown Attribute " + name + "."));
    }
    const auto current = queue.attributes.find(name);
    const std::string_view current_value =
        current == queue.attributes.end() ? std::string_view{} : std::string_view(current->second);
    same = same && current_value == value;
    accepted.emplace_back(name, std::move(value));
  }
  if (only_compare) return same;
  for (auto& [name, value] : accepted) {
    if (name == "RedrivePolicy" && value.empty()) {
      queue.attributes.erase(name);
    } else {
      queue.attributes[name] = std::move(value);
    }
  }
  const auto number = [&](std::string_view name) {
    const auto& spec = *std::ranges::find(kNumericAttributes, name, &NumericAttribute::name);
    return *parse_integer(queue.attributes.at(std::string(name)), spec.low, spec.high);
  };
  queue.visibility_timeout = number("VisibilityTimeout");
  queue.delay_seconds = number("DelaySeconds");
  queue.maximum_message_size = number("MaximumMessageSize");
  queue.wait_seconds = number("ReceiveMessageWaitTimeSeconds");
  queue.modified_s = epoch_ms() / 1000;
  return true;
}

std::string url_reply(const Queue& queue) {
  std::string body = R"({"QueueUrl":)";
  put_string(body, queue.url);
  body += '}';
  return body;
}

}  // namespace

Reply Sqs::create_queue(const json& request) {
  const std::string* name = string_member(request, "QueueName");
  if (name == nullptr) return sqs_error(kMissingParameter, "The request must contain QueueName.");
  if (!valid_queue_name(*name)) {
    return sqs_error(kInvalidParameter,
                     "Can only include alphanumeric characters, hyphens, or underscores. 1 "
                     "to 80 in length");
  }
  const auto attributes_it = request.find("Attributes");
  const json attributes =
      attributes_it == request.end() || attributes_it->is_null() ? json::object() : *attributes_it;
  const std::scoped_lock lock(mutex_);
  if (const auto existing = queues_.find(*name); existing != queues_.end()) {
    auto same = apply_attributes(*existing->second, attributes, /*only_compare=*/true);
    if (!same) return std::move(same.error());
    if (!*same) {
      return sqs_error(kQueueNameExists,
                       "A queue already exists with the same name and a different value for "
                       "attribute(s)");
    }
    return ok(url_reply(*existing->second));
  }
  auto queue = std::make_unique<Queue>();
  queue->index = static_cast<std::uint32_t>(queues_.size());
  queue->name = *name;
  queue->url = "http://127.0.0.1:" + number_text(port_.load(std::memory_order_relaxed)) + "/" +
               std::string(kAccount) + "/" + *name;
  queue->arn = "arn:aws:sqs:" + std::string(kRegion) + ":" + std::string(kAccount) + ":" + *name;
  for (const auto& numeric : kNumericAttributes) {
    queue->attributes[std::string(numeric.name)] = number_text(numeric.fallback);
  }
  queue->attributes["SqsManagedSseEnabled"] = "false";
  queue->created_s = epoch_ms() / 1000;
  auto applied = apply_attributes(*queue, attributes, /*only_compare=*/false);
  if (!applied) return std::move(applied.error());
  std::string body = url_reply(*queue);
  queues_.emplace(*name, std::move(queue));
  return ok(std::move(body));
}

Reply Sqs::get_queue_url(const json& request) {
  const std::string* name = string_member(request, "QueueName");
  if (name == nullptr) return sqs_error(kMissingParameter, "The request must contain QueueName.");
  const std::scoped_lock lock(mutex_);
  const auto it = queues_.find(*name);
  if (it == queues_.end()) {
    return sqs_error(kQueueDoesNotExist, "The specified queue does not exist.");
  }
  return ok(url_reply(*it->second));
}

Reply Sqs::get_queue_attributes(const json& request) {
  const std::scoped_lock lock(mutex_);
  auto queue = queue_of(request);
  if (!queue) return std::move(queue.error());
  Queue& q = **queue;
  promote(q, Steady::now());
  std::map<std::string, std::string, std::less<>> all = q.attributes;
  all["ApproximateNumberOfMessages"] =
      number_text(static_cast<std::int64_t>(q.count(MessageState::Visible)));
  all["ApproximateNumberOfMessagesNotVisible"] =
      number_text(static_cast<std::int64_t>(q.count(MessageState::InFlight)));
  all["ApproximateNumberOfMessagesDelayed"] =
      number_text(static_cast<std::int64_t>(q.count(MessageState::Delayed)));
  all["CreatedTimestamp"] = number_text(q.created_s);
  all["LastModifiedTimestamp"] = number_text(q.modified_s);
  all["QueueArn"] = q.arn;
  std::vector<std::string> wanted;
  const auto names = request.find("AttributeNames");
  if (names != request.end() && names->is_array()) {
    for (const auto& name : *names) {
      if (!name.is_string()) return sqs_error(kInvalidAttributeName, "Unknown Attribute.");
      wanted.push_back(name.get<std::string>());
    }
  }
  const bool every = std::ranges::find(wanted, "All") != wanted.end();
  for (const auto& name : wanted) {
    // An attribute SQS has but that is not set (RedrivePolicy) is left out, not refused.
    if (name != "All" && name != "RedrivePolicy" && !all.contains(name)) {
      return sqs_error(kInvalidAttributeName, "Unknown Attribute " + name + ".");
    }
  }
  std::string body = "{";
  bool first = true;
  for (const auto& [name, value] : all) {
    if (!every && std::ranges::find(wanted, name) == wanted.end()) continue;
    body += first ? R"("Attributes":{)" : ",";
    first = false;
    put_key(body, name);
    put_string(body, value);
  }
  body += first ? "}" : "}}";
  return ok(std::move(body));
}

Reply Sqs::set_queue_attributes(const json& request) {
  const std::scoped_lock lock(mutex_);
  auto queue = queue_of(request);
  if (!queue) return std::move(queue.error());
  const auto attributes = request.find("Attributes");
  if (attributes == request.end()) {
    return sqs_error(kMissingParameter, "The request must contain Attributes.");
  }
  auto applied = apply_attributes(**queue, *attributes, /*only_compare=*/false);
  if (!applied) return std::move(applied.error());
  return ok("{}");
}

}  // namespace ic::bench::fast_aws
