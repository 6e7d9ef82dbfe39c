#include "testing/backend_fixture.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <thread>

#include "aws/json_client.hpp"
#include "event/run_blocking.hpp"
#include "testing/child_process.hpp"
#include "testing/moto_fixture.hpp"

namespace ic::testing {
namespace {

using namespace std::chrono_literals;

class MotoBackend final : public TestBackend {
 public:
  const std::string& endpoint() const override { return shared_moto().endpoint(); }
  bool reset() const override { return shared_moto().reset(); }
  std::string_view kind() const override { return "moto"; }
};

// An emulator without a reset endpoint: reset() lists what exists and deletes each one.
class ChildBackend : public TestBackend {
 public:
  ChildBackend(std::string kind, std::vector<std::string> argv,
               const std::vector<std::pair<std::string, std::string>>& env,
               aws::JsonServiceConfig service)
      : kind_(std::move(kind)),
        log_(fmt::format("{}/{}-{}.log", std::filesystem::temp_directory_path().string(), kind_,
                         ::getpid())),
        child_(kind_, std::move(argv), env, log_),
        endpoint_(fmt::format("http://127.0.0.1:{}", child_.port())),
        wiring_(endpoint_) {
    service.endpoint = endpoint_;
    service.region = "us-east-1";
    service.timeouts = {.connect = 2000ms, .total = 10000ms};
    client_ = std::make_unique<aws::JsonClient>(service, wiring_.curl, wiring_.credentials,
                                                wiring_.retry);
  }
  ~ChildBackend() override {
    std::error_code ignored;
    std::filesystem::remove(log_, ignored);
  }
  const std::string& endpoint() const override { return endpoint_; }
  std::string_view kind() const override { return kind_; }

 protected:
  // One request, blocking the test thread that resets.
  aws::JsonClient::Reply call(std::string_view operation, const nlohmann::json& request) const {
    return event::run_blocking(client_->call(operation, request));
  }

 private:
  std::string kind_;
  std::string log_;
  ListeningChild child_;
  std::string endpoint_;
  DynamoDbWiring wiring_;  // its transport, credentials and retry policy serve client_ too
  std::unique_ptr<aws::JsonClient> client_;
};

class ElasticMqBackend final : public ChildBackend {
 public:
  ElasticMqBackend()
      : ChildBackend("elasticmq",
                     python_module_argv("tools.elasticmq_server", {"--log-level=warning"}),
                     python_module_env(),
                     {.service = "sqs", .signing_name = "sqs", .target_prefix = "AmazonSQS"}) {}
  bool reset() const override {
    auto queues = call("ListQueues", nlohmann::json::object());
    if (!queues) return false;
    for (const auto& url : queues->value("QueueUrls", nlohmann::json::array())) {
      if (!call("DeleteQueue", {{"QueueUrl", url}})) return false;
    }
    return true;
  }
};

class DynaliteBackend final : public ChildBackend {
 public:
  DynaliteBackend()
      : ChildBackend(
            "dynalite",
            {"/usr/bin/env", "node", std::string(IC_SOURCE_DIR) + "/tools/dynalite/server.js"}, {},
            {.service = "dynamodb",
             .signing_name = "dynamodb",
             .target_prefix = "DynamoDB_20120810"}) {}
  bool reset() const override {
    auto tables = call("ListTables", nlohmann::json::object());
    if (!tables) return false;
    for (const auto& name : tables->value("TableNames", nlohmann::json::array())) {
      if (!call("DeleteTable", {{"TableName", name}})) return false;
    }
    // DeleteTable answers while the table is still DELETING: a CreateTable of the same name
    // before it is gone would be refused, and the table would then vanish under the test.
    const auto deadline = std::chrono::steady_clock::now() + 10s;
    while (std::chrono::steady_clock::now() < deadline) {
      auto left = call("ListTables", nlohmann::json::object());
      if (!left) return false;
      if (left->value("TableNames", nlohmann::json::array()).empty()) return true;
      std::this_thread::sleep_for(5ms);
    }
    return false;
  }
};

std::unique_ptr<TestBackend> start_backend(std::string_view kind) {
  if (kind == "moto") return std::make_unique<MotoBackend>();
  if (kind == "elasticmq") return std::make_unique<ElasticMqBackend>();
  if (kind == "dynalite") return std::make_unique<DynaliteBackend>();
  throw std::runtime_error(
      fmt::format("IC_TEST_BACKEND={}: expected moto, elasticmq or dynalite", kind));
}

}  // namespace

std::string_view test_backend_kind() {
  const char* kind = std::getenv("IC_TEST_BACKEND");
  return kind != nullptr && *kind != '\0' ? kind : "moto";
}

TestBackend& shared_backend() {
  static const std::unique_ptr<TestBackend> backend = start_backend(test_backend_kind());
  return *backend;
}

}  // namespace ic::testing
