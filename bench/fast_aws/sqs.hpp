// SQS in memory, over the JSON protocol (X-Amz-Target AmazonSQS.<Op>): CreateQueue,
// GetQueueUrl, GetQueueAttributes, SetQueueAttributes, SendMessage, SendMessageBatch,
// ReceiveMessage (long polls suspend their connection, so they hold up no other request),
// DeleteMessage, DeleteMessageBatch, ChangeMessageVisibility, ChangeMessageVisibilityBatch.
// Visibility timeouts, delays and receipt handles behave as on AWS; see main.cpp for what is
// left out.
#pragma once

#include <microhttpd.h>

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <expected>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fast_aws/md5.hpp"
#include "fast_aws/reply.hpp"
#include "fast_aws/request.hpp"
#include "fast_aws/sqs_queue.hpp"

namespace ic::bench::fast_aws {

// A message as a send will store it, checked against its queue.
struct Outgoing {
  std::string body;
  std::vector<std::pair<std::string, std::string>> attributes;
  std::int64_t delay = 0;
  std::size_t size = 0;  // body and attributes, as SQS counts them against MaximumMessageSize
};

class Sqs {
 public:
  void set_port(std::uint16_t port) { port_.store(port, std::memory_order_relaxed); }

  // The reply, or nullopt when the request is a long poll that suspended its connection.
  std::optional<Reply> handle(std::string_view operation, const nlohmann::json& request,
                              Request& http);

  // Wakes the long polls whose wait ended or whose queue has visible messages again (after a
  // visibility timeout or a delay ran out); runs until stop().
  void run_timers();

  // Answers every suspended long poll (empty) and ends run_timers: MHD may not be stopped
  // while a connection is suspended.
  void stop();

 private:
  // The queue the request's QueueUrl names; the caller holds mutex_.
  std::expected<Queue*, Reply> queue_of(const nlohmann::json& request);

  // sqs_queues.cpp
  Reply create_queue(const nlohmann::json& request);
  Reply get_queue_url(const nlohmann::json& request);
  Reply get_queue_attributes(const nlohmann::json& request);
  Reply set_queue_attributes(const nlohmann::json& request);

  // sqs_send.cpp
  // Stores one message and returns it. Adds to `wake` a waiter it can serve.
  const Message& enqueue(Queue& queue, Outgoing&& out, std::vector<MHD_Connection*>& wake);
  std::string message_id();
  Reply send(const nlohmann::json& request);
  Reply send_batch(const nlohmann::json& request);

  // sqs_receive.cpp
  std::optional<Reply> receive(const nlohmann::json& request, Request& http);

  // sqs_receipts.cpp
  Reply delete_message(const nlohmann::json& request);
  Reply delete_batch(const nlohmann::json& request);
  Reply change_visibility(const nlohmann::json& request);
  Reply change_visibility_batch(const nlohmann::json& request);

  std::mutex mutex_;
  std::condition_variable timers_changed_;  // a new waiter or timer: run_timers recomputes
  bool stopping_ = false;
  std::unordered_map<std::string, std::unique_ptr<Queue>> queues_;
  std::mt19937_64 random_{std::random_device{}()};
  Md5 md5_;
  std::atomic<std::uint16_t> port_{0};
};

}  // namespace ic::bench::fast_aws
