// A moto server (tools/moto_server.py, DynamoDB requests serialised) for C++ integration tests:
// started on a free 127.0.0.1 port, reset between tests, stopped (SIGTERM, then SIGKILL) when
// the owner goes away. Plus the AWS client wiring every DynamoDB test needs. Always the
// launcher, never plain moto: the claim races need atomic conditional writes, and the SQS
// tests count messages, which plain moto's SQS can lose or resurrect under concurrent requests
// (the launcher serialises SQS too, long polls excepted).
//
//   auto moto = MotoServer::start({});           // once per test binary (see shared_moto())
//   ASSERT_TRUE(moto->reset());                  // before each test
//   DynamoDbWiring wiring(moto->endpoint());     // JsonClient with dummy static credentials
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "adapters/dynamodb/dynamodb_store.hpp"
#include "aws/credentials/credentials.hpp"
#include "aws/json_client.hpp"
#include "aws/protocol/retry_policy.hpp"
#include "http/curl_transport.hpp"
#include "testing/child_process.hpp"
#include "testing/static_credentials.hpp"

namespace ic::testing {

class MotoServer {
 public:
  // Extra environment for moto (e.g. INITIAL_NO_AUTH_ACTION_COUNT); throws when it won't start.
  static std::unique_ptr<MotoServer> start(std::vector<std::pair<std::string, std::string>> env);
  ~MotoServer();
  MotoServer(const MotoServer&) = delete;
  MotoServer& operator=(const MotoServer&) = delete;

  [[nodiscard]] const std::string& endpoint() const { return endpoint_; }
  [[nodiscard]] bool reset() const;  // POST /moto-api/reset: every table and user is gone

 private:
  MotoServer(const std::vector<std::pair<std::string, std::string>>& env, std::string log);
  ListeningChild child_;
  std::string endpoint_;
  std::string log_;  // moto's stderr; removed with the server, named in start-up errors
};

// The moto server of this test binary, started on first use and stopped at exit.
MotoServer& shared_moto();

// Transport, credentials, retry policy and a DynamoDB JsonClient for one endpoint.
struct DynamoDbWiring {
  explicit DynamoDbWiring(const std::string& endpoint, std::string key_id = "AKIDTEST",
                          std::string secret = "secret",
                          http::AsyncHttpTransport* transport = nullptr);

  http::CurlTransport curl;
  StaticCredentials credentials;
  aws::RetryPolicy retry;
  aws::JsonClient client;
};

inline constexpr const char* kTable = "idempotency-test";

}  // namespace ic::testing
