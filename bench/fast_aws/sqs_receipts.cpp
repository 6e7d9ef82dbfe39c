// What SQS does with a receipt handle: DeleteMessage, ChangeMessageVisibility and their
// batches, each entry of a batch checked and applied as the single call would.
#include <chrono>

#include "fast_aws/receipt_handle.hpp"
#include "fast_aws/request_members.hpp"
#include "fast_aws/sqs.hpp"
#include "fast_aws/sqs_batch.hpp"
#include "fast_aws/sqs_faults.hpp"

namespace ic::bench::fast_aws {
namespace {

using nlohmann::json;

EntryFault invalid_handle(std::string_view handle) {
  return {&kReceiptHandleIsInvalid, "The input receipt handle \"" + std::string(handle) +
                                        "\" is not a valid receipt handle."};
}

// As AWS: a handle that was issued deletes its message if it is the latest one, and succeeds
// without deleting anything if it is older or its message is already gone.
std::optional<EntryFault> delete_one(Queue& queue, const std::string& handle) {
  const Located found = locate(queue, handle);
  if (found.receipt == Receipt::Invalid) return invalid_handle(handle);
  if (found.receipt == Receipt::Current) {
    // Its visible-list entry or timer, if any, is skipped once the message is gone.
    --queue.counts[static_cast<int>(found.message->state)];
    queue.messages.erase(found.seq);
  }
  return std::nullopt;
}

// A new visibility timeout from now for a message in flight under this receipt.
std::optional<EntryFault> change_one(Queue& queue, const std::string& handle, std::int64_t timeout,
                                     std::vector<MHD_Connection*>& wake) {
  const Located found = locate(queue, handle);
  if (found.receipt == Receipt::Invalid) return invalid_handle(handle);
  if (found.receipt != Receipt::Current) {
    return EntryFault{&kInvalidParameter,
                      "Value " + handle +
                          " for parameter ReceiptHandle is invalid. Reason: "
                          "Message does not exist or is not available for visibility timeout "
                          "change."};
  }
  Message& message = *found.message;
  if (message.state != MessageState::InFlight) {
    return EntryFault{&kMessageNotInflight, "Message is not in flight."};
  }
  ++message.generation;
  if (timeout == 0) {
    queue.move(message, MessageState::Visible);
    queue.visible.push_back(found.seq);
    take_waiters(queue, 1, wake);
  } else {
    queue.timers.push(
        {Steady::now() + std::chrono::seconds(timeout), found.seq, message.generation});
  }
  return std::nullopt;
}

// DeleteMessage's members, or one entry of DeleteMessageBatch.
std::optional<EntryFault> delete_entry(Queue& queue, const json& entry) {
  const std::string* handle = string_member(entry, "ReceiptHandle");
  if (handle == nullptr) {
    return EntryFault{&kMissingParameter, "The request must contain ReceiptHandle."};
  }
  return delete_one(queue, *handle);
}

// ChangeMessageVisibility's members, or one entry of ChangeMessageVisibilityBatch.
std::optional<EntryFault> change_entry(Queue& queue, const json& entry,
                                       std::vector<MHD_Connection*>& wake) {
  const std::string* handle = string_member(entry, "ReceiptHandle");
  if (handle == nullptr) {
    return EntryFault{&kMissingParameter, "The request must contain ReceiptHandle."};
  }
  auto timeout = integer_member(entry, "VisibilityTimeout", 0, 43200, -1);
  if (!timeout || *timeout < 0) {
    return EntryFault{&kInvalidParameter,
                      timeout ? "The request must contain VisibilityTimeout." : timeout.error()};
  }
  return change_one(queue, *handle, *timeout, wake);
}

}  // namespace

Reply Sqs::delete_message(const json& request) {
  const std::scoped_lock lock(mutex_);
  auto queue = queue_of(request);
  if (!queue) return std::move(queue.error());
  if (auto fault = delete_entry(**queue, request)) return sqs_error(*fault->fault, fault->message);
  return ok("{}");
}

Reply Sqs::delete_batch(const json& request) {
  const std::scoped_lock lock(mutex_);
  auto queue = queue_of(request);
  if (!queue) return std::move(queue.error());
  auto entries = batch_entries(request);
  if (!entries) return std::move(entries.error());
  BatchReply reply;
  for (const auto& entry : **entries) {
    reply.outcome(entry["Id"].get_ref<const std::string&>(), delete_entry(**queue, entry));
  }
  return ok(std::move(reply).take());
}

Reply Sqs::change_visibility(const json& request) {
  std::vector<MHD_Connection*> wake;
  {
    const std::scoped_lock lock(mutex_);
    auto queue = queue_of(request);
    if (!queue) return std::move(queue.error());
    if (auto fault = change_entry(**queue, request, wake)) {
      return sqs_error(*fault->fault, fault->message);
    }
  }
  resume(wake);
  return ok("{}");
}

Reply Sqs::change_visibility_batch(const json& request) {
  std::vector<MHD_Connection*> wake;
  BatchReply reply;
  {
    const std::scoped_lock lock(mutex_);
    auto queue = queue_of(request);
    if (!queue) return std::move(queue.error());
    auto entries = batch_entries(request);
    if (!entries) return std::move(entries.error());
    for (const auto& entry : **entries) {
      reply.outcome(entry["Id"].get_ref<const std::string&>(), change_entry(**queue, entry, wake));
    }
  }
  resume(wake);
  return ok(std::move(reply).take());
}

}  // namespace ic::bench::fast_aws
