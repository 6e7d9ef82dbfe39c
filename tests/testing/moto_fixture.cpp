#include "testing/moto_fixture.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>

namespace ic::testing {

using namespace std::chrono_literals;

std::unique_ptr<MotoServer> MotoServer::start(
    std::vector<std::pair<std::string, std::string>> env) {
  const std::string log =
      fmt::format("{}/moto-{}.log", std::filesystem::temp_directory_path().string(), ::getpid());
  return std::unique_ptr<MotoServer>(new MotoServer(env, log));
}

MotoServer::MotoServer(const std::vector<std::pair<std::string, std::string>>& env, std::string log)
    : child_("moto", python_module_argv("tools.moto_server", {"--log-level=warning"}),
             python_module_env(env), log),
      endpoint_(fmt::format("http://127.0.0.1:{}", child_.port())),
      log_(std::move(log)) {}

MotoServer::~MotoServer() {
  std::error_code ignored;
  std::filesystem::remove(log_, ignored);
}

bool MotoServer::reset() const {
  http::CurlTransport curl;
  http::BlockingTransport transport(curl);
  auto reply = transport.send({.method = "POST", .url = endpoint_ + "/moto-api/reset"},
                              {.connect = 2000ms, .total = 10000ms});
  return reply && reply->status == 200;
}

MotoServer& shared_moto() {
  static const std::unique_ptr<MotoServer> server = MotoServer::start({});
  return *server;
}

DynamoDbWiring::DynamoDbWiring(const std::string& endpoint, std::string key_id, std::string secret,
                               http::AsyncHttpTransport* transport)
    : credentials(std::move(key_id), std::move(secret)),
      // Backoff in milliseconds keeps retry tests quick; the policy logic is the production one.
      retry(aws::RetryConfig{.transient_base = 5ms, .throttling_base = 5ms}),
      client({.service = "dynamodb",
              .signing_name = "dynamodb",
              .target_prefix = "DynamoDB_20120810",
              .endpoint = endpoint,
              .region = "us-east-1",
              .timeouts = {.connect = 2000ms, .total = 10000ms}},
             transport != nullptr ? *transport : curl, credentials, retry) {}

}  // namespace ic::testing
