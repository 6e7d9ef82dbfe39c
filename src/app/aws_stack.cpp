#include "app/aws_stack.hpp"

#include <utility>

#include "domain/charge_status.hpp"

namespace ic::app {
namespace {

using namespace std::chrono_literals;

// Long polls hold the connection 20 s, so SQS gets a longer total timeout than DynamoDB,
// whose single-item writes should answer in milliseconds.
constexpr http::HttpTimeouts kDynamoDbTimeouts{.connect = 2s, .total = 5s};
constexpr http::HttpTimeouts kSqsTimeouts{.connect = 2s, .total = 30s};
constexpr http::HttpTimeouts kProbeTimeouts{.connect = 2s, .total = 5s};

aws::JsonServiceConfig dynamodb_config(const AwsSettings& settings, http::HttpTimeouts timeouts) {
  return {.service = "dynamodb",
          .signing_name = "dynamodb",
          .target_prefix = "DynamoDB_20120810",
          .endpoint = settings.dynamodb_endpoint,
          .region = settings.region,
          .timeouts = timeouts,
          .verify_crc32 = true};
}

aws::JsonServiceConfig sqs_config(const AwsSettings& settings, http::HttpTimeouts timeouts) {
  return {.service = "sqs",
          .signing_name = "sqs",
          .target_prefix = std::string(sqs::kSqsTargetPrefix),
          .endpoint = settings.sqs_endpoint,
          .region = settings.region,
          .timeouts = timeouts};
}

}  // namespace

AwsStack::AwsStack(const AwsSettings& settings, const aws::EnvLookup& env,
                   aws::JsonClientObserver* observer,
                   aws::CredentialsObserver* credentials_observer)
    // One transport for every AWS call, credentials included, so AWS_CA_BUNDLE verifies them
    // all as it does in the SDKs.
    : transport_(http::TlsClientFiles{.ca_file = settings.ca_bundle}),
      blocking_transport_(transport_),
      credential_fetches_(blocking_transport_),
      credentials_(aws::make_default_credentials_chain(env, credential_fetches_, real_clock(),
                                                       credential_fetches_.token()),
                   real_clock(), real_random(), {}, credentials_observer),
      dynamodb_(dynamodb_config(settings, kDynamoDbTimeouts), transport_, credentials_, retry_,
                {.observer = observer}),
      sqs_json_(sqs_config(settings, kSqsTimeouts), transport_, credentials_, retry_,
                {.observer = observer}),
      sqs_client_(sqs_json_),
      probe_retry_({.max_attempts = 1}),
      probe_dynamodb_(dynamodb_config(settings, kProbeTimeouts), transport_, credentials_,
                      probe_retry_, {.observer = observer}),
      probe_sqs_json_(sqs_config(settings, kProbeTimeouts), transport_, credentials_, probe_retry_,
                      {.observer = observer}),
      probe_sqs_client_(probe_sqs_json_) {
  credentials_.start();
  (void)credentials_.wait_for_first_refresh(kFirstCredentialsWait);
}

AwsStack::~AwsStack() {
  credential_fetches_.stop();
  credentials_.stop();
}

std::string AwsStack::credential_source() {
  auto credentials = credentials_.credentials();
  if (!credentials) return "none: " + credentials.error().code;
  return credentials_.active_provider().value_or("unknown");
}

dynamodb::TableSpec charge_table(std::string name, std::chrono::seconds retention) {
  return {.name = std::move(name),
          .retention = retention,
          .result_attribute = "debitRef",
          .attention_statuses = {
              std::string(domain::to_string(domain::ChargeStatus::DebitedNotificationFailed))}};
}

}  // namespace ic::app
