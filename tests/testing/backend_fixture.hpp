// The AWS emulator an integration test binary runs against, chosen by IC_TEST_BACKEND so that
// one test source checks every emulator (the conformance matrix: tests/integration/*/
// CMakeLists.txt registers each binary once per backend):
//   moto       tools/moto_server.py (SQS + DynamoDB; the default when the variable is unset)
//   elasticmq  tools/elasticmq_server.py (SQS only)
//   dynalite   tools/dynalite/server.js (DynamoDB only)
// Started on first use on a free 127.0.0.1 port, stopped at exit.
//
//   auto& backend = shared_backend();
//   ASSERT_TRUE(backend.reset());                 // before each test: no queue, no table
//   DynamoDbWiring wiring(backend.endpoint());
#pragma once

#include <string>
#include <string_view>

namespace ic::testing {

// Thread-safety: endpoint() and kind() may be called from any thread; reset() from one test
// thread at a time (it deletes what every other client of the emulator sees).
class TestBackend {
 public:
  virtual ~TestBackend() = default;
  [[nodiscard]] virtual const std::string& endpoint() const = 0;
  // Deletes every queue and table (moto: its reset endpoint, which also drops IAM users).
  [[nodiscard]] virtual bool reset() const = 0;
  [[nodiscard]] virtual std::string_view kind() const = 0;  // "moto", "elasticmq", "dynalite"
};

// The backend IC_TEST_BACKEND names, started on first use; throws for an unknown name or an
// emulator that does not start (e.g. ElasticMQ's jars missing: run scripts/install-deps.sh).
TestBackend& shared_backend();

// IC_TEST_BACKEND, or "moto" when unset: tests that assert an emulator's known gap branch on it.
[[nodiscard]] std::string_view test_backend_kind();

}  // namespace ic::testing
