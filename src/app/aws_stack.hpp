// The AWS plumbing every subcommand shares, built once from the settings: one HTTP transport
// (asynchronous for the JSON clients, a blocking view of it for the credential providers'
// fetches, which run on the credentials cache's own thread), the default credential chain
// behind a background-refreshed cache, one retry policy (one retry quota, as the SDKs share
// it) and the JSON clients for DynamoDB and SQS.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "adapters/dynamodb/dynamodb_codec.hpp"
#include "adapters/sqs/sqs_client.hpp"
#include "app/settings.hpp"
#include "aws/credentials/credentials_cache.hpp"
#include "aws/json_client.hpp"
#include "aws/protocol/retry_policy.hpp"
#include "http/curl_transport.hpp"
#include "http/stoppable_transport.hpp"

namespace ic::app {

// How long start-up waits for the first credentials: longer than one STS call or metadata
// round trip, shorter than credential_process's 60 s limit (which then goes on in the
// background while the first calls fail as retryable).
inline constexpr std::chrono::seconds kFirstCredentialsWait{20};

// Ownership: owns everything it builds; members reference each other, so it never moves.
// Thread-safety: the clients' (their tasks run on the loop of whoever awaits them).
class AwsStack {
 public:
  // Starts the credentials' refresher and waits for its first fetch, at most
  // kFirstCredentialsWait: it is built before any loop serves.
  AwsStack(const AwsSettings& settings, const aws::EnvLookup& env,
           aws::JsonClientObserver* observer = nullptr,
           aws::CredentialsObserver* credentials_observer = nullptr);
  // Cuts a credential fetch in flight, so a stop does not wait out its timeout.
  ~AwsStack();
  AwsStack(const AwsStack&) = delete;
  AwsStack& operator=(const AwsStack&) = delete;

  aws::JsonClient& dynamodb() { return dynamodb_; }
  sqs::SqsClient& sqs() { return sqs_client_; }
  // For readiness probes: one attempt with a short timeout, so an outage is noticed within
  // seconds instead of after a long poll's timeout and its retries.
  aws::JsonClient& probe_dynamodb() { return probe_dynamodb_; }
  sqs::SqsClient& probe_sqs() { return probe_sqs_client_; }

  // Which provider of the chain answers ("environment", "web-identity", "profile", "container",
  // "imds"), or "none: <code>" when none does (yet); never waits, never prints a key.
  [[nodiscard]] std::string credential_source();
  [[nodiscard]] const aws::CredentialsCache& credentials() const { return credentials_; }

 private:
  http::CurlTransport transport_;
  http::BlockingTransport blocking_transport_;
  http::StoppableTransport credential_fetches_;
  aws::CredentialsCache credentials_;
  aws::RetryPolicy retry_;
  aws::JsonClient dynamodb_;
  aws::JsonClient sqs_json_;
  sqs::SqsClient sqs_client_;
  aws::RetryPolicy probe_retry_;
  aws::JsonClient probe_dynamodb_;
  aws::JsonClient probe_sqs_json_;
  sqs::SqsClient probe_sqs_client_;
};

// The charge domain's idempotency table (docs/design.md §3): the effect's reference is the
// bank's debitId, recorded as debitRef.
[[nodiscard]] dynamodb::TableSpec charge_table(std::string name, std::chrono::seconds retention);

}  // namespace ic::app
