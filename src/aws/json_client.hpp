// Client for AWS services that speak the AWS JSON 1.0 protocol (DynamoDB, SQS): POST / with
// X-Amz-Target = "<target_prefix>.<operation>", SigV4-signed, retried in the SDKs' standard
// mode. Knows nothing about any particular service beyond the config it is given.
//
//   JsonClient dynamodb({.service = "dynamodb", .signing_name = "dynamodb",
//                        .target_prefix = "DynamoDB_20120810", .endpoint = endpoint,
//                        .region = region},
//                       transport, credentials, retry_policy);
//   auto item = co_await dynamodb.call("GetItem", {{"TableName", "t"}, {"Key", ...}});
//   // item: the parsed reply, or an AwsError already classified (and flagged `ambiguous`
//   // when a write may have happened although no answer arrived).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <expected>
#include <functional>
#include <nlohmann/json.hpp>
#include <stop_token>
#include <string>
#include <string_view>

#include "aws/credentials/credentials.hpp"
#include "aws/protocol/aws_error.hpp"
#include "aws/protocol/retry_policy.hpp"
#include "core/async_sleeper.hpp"
#include "core/task.hpp"
#include "core/time.hpp"
#include "event/wait_queue.hpp"
#include "http/http_transport.hpp"

namespace ic::aws {

struct JsonServiceConfig {
  std::string service;        // label in metrics and logs, e.g. "dynamodb", "sqs"
  std::string signing_name;   // SigV4 service name, e.g. "dynamodb", "sqs"
  std::string target_prefix;  // e.g. "DynamoDB_20120810", "AmazonSQS"
  std::string endpoint;       // scheme://host[:port][/path], see endpoints.hpp
  std::string region;         // SigV4 region, e.g. "us-east-1"
  http::HttpTimeouts timeouts{};
  // Verify each reply's x-amz-crc32 (DynamoDB sends it); a mismatch is a retryable, ambiguous
  // CRC32CheckFailed, a reply without the header is accepted.
  bool verify_crc32 = false;
};

// One HTTP attempt of a call, reported after it finished.
struct AttemptEvent {
  std::string_view service;
  std::string_view operation;
  int attempt = 1;          // 1-based
  std::string_view result;  // "ok", or the error code (e.g. ThrottlingException, TimeoutAfterSend)
  long http_status = 0;     // 0 when no response arrived
  bool will_retry = false;  // the client is going to try again
  std::chrono::nanoseconds duration{};
};

// Receives every attempt, e.g. to export "AWS requests and retries by service, operation and
// result". Thread-safety: called from every loop thread that uses the client, concurrently;
// must not block. Ownership: not owned by the client; must outlive it.
class JsonClientObserver {
 public:
  virtual ~JsonClientObserver() = default;
  virtual void on_attempt(const AttemptEvent& event) = 0;
};

// Injected so tests control time, randomness and waiting; defaults use the real ones. The
// clock and sleeper are borrowed and must outlive the client.
struct JsonClientHooks {
  const Clock& clock = real_clock();              // signing time
  AsyncSleeper& sleeper = event::loop_sleeper();  // backoff waits, on the caller's loop
  std::function<std::string()> invocation_id;     // amz-sdk-invocation-id
  JsonClientObserver* observer = nullptr;
};

// Thread-safety: call() may be called from any number of tasks on any number of loop threads at
// once (event::run_blocking gives a blocking caller a loop); each call's task is awaited at once
// on the loop that started it. The credentials provider is asked on that thread, so it must
// answer without waiting (CredentialsCache copies cached keys or fails as retryable at once).
// Ownership: the transport, credentials provider and retry policy are borrowed and must outlive
// the client; the retry policy (and so its retry quota) may be shared by several clients.
class JsonClient {
 public:
  JsonClient(JsonServiceConfig config, http::AsyncHttpTransport& transport,
             CredentialsProvider& credentials, RetryPolicy& retry, JsonClientHooks hooks = {});

  // Sends `request` as operation `operation` (e.g. "UpdateItem"), retrying retryable failures
  // with a fresh signature per attempt and one invocation id across attempts. On failure the
  // AwsError is classified; `response_body` carries the service's error document (e.g. the
  // ALL_OLD Item of a ConditionalCheckFailedException); `ambiguous` is set when any attempt
  // may have taken effect (timeout or dropped connection after sending, or a 5xx reply).
  // A reply is always a JSON object: a 2xx whose body is not one is a retryable, ambiguous
  // MalformedResponse. With `verify_crc32` any reply (2xx or error) whose body does not match
  // its x-amz-crc32 is a retryable, ambiguous CRC32CheckFailed, read no further.
  // Once `cancel` is requested the attempt in progress is abandoned and nothing is retried.
  using Reply = std::expected<nlohmann::json, AwsError>;
  [[nodiscard]] Task<Reply> call(std::string_view operation, const nlohmann::json& request,
                                 std::stop_token cancel = {});
  // The same with the request already serialised: the bodies sent on every message are
  // written as text (aws::JsonWriter) rather than built as a document and dumped.
  [[nodiscard]] Task<Reply> call_with_body(std::string_view operation, std::string body,
                                           std::stop_token cancel = {});

  [[nodiscard]] const JsonServiceConfig& config() const { return config_; }

  // Current correction applied to the signing clock, learnt from clock-skew errors.
  [[nodiscard]] std::chrono::milliseconds clock_skew() const;

 private:
  [[nodiscard]] Task<Reply> attempt_once(std::string_view operation, const std::string& body,
                                         const std::string& invocation_id, int attempt,
                                         const std::stop_token& cancel, long& http_status);
  // What a reply says: the JSON object of a 2xx, or the classified error.
  [[nodiscard]] Reply read_reply(const http::HttpResponse& response);
  void learn_skew(const http::HttpResponse& response);

  JsonServiceConfig config_;
  std::string url_;
  bool endpoint_valid_;
  http::AsyncHttpTransport& transport_;
  CredentialsProvider& credentials_;
  RetryPolicy& retry_;
  JsonClientHooks hooks_;
  std::atomic<std::int64_t> skew_ms_{0};
};

}  // namespace ic::aws
