// The real fake bank (`python -m tools.fake_bank`) as a child of a C++ integration test:
// started on a free 127.0.0.1 port (it binds port 0 and announces the port on stdout), reset
// and configured through its admin API, stopped (SIGTERM, then SIGKILL) on destruction.
//
//   FakeBankProcess& bank = shared_fake_bank();    // once per test binary
//   ASSERT_TRUE(bank.reset());
//   ASSERT_TRUE(bank.set_faults(R"({"permanentFailures":{"ACC-9":"INSUFFICIENT_FUNDS"}})"));
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "testing/child_process.hpp"

namespace ic::testing {

class FakeBankProcess {
 public:
  // Throws when the process cannot be started or announces no port within a minute.
  static std::unique_ptr<FakeBankProcess> start();
  FakeBankProcess(const FakeBankProcess&) = delete;
  FakeBankProcess& operator=(const FakeBankProcess&) = delete;

  [[nodiscard]] std::string base_url() const;
  [[nodiscard]] bool reset() const;                              // empty ledger, no faults
  [[nodiscard]] bool set_faults(const std::string& json) const;  // replaces all faults
  [[nodiscard]] std::optional<nlohmann::json> ledger() const;

 private:
  explicit FakeBankProcess(const std::string& log);
  ListeningChild child_;
};

// The fake bank of this test binary, started on first use and stopped at exit.
FakeBankProcess& shared_fake_bank();

}  // namespace ic::testing
