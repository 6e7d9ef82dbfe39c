#include "testing/fake_bank_process.hpp"

#include <httplib.h>
#include <unistd.h>

#include <filesystem>

namespace ic::testing {

std::unique_ptr<FakeBankProcess> FakeBankProcess::start() {
  const std::string log = (std::filesystem::temp_directory_path() /
                           ("fake-bank-" + std::to_string(::getpid()) + ".log"))
                              .string();
  return std::unique_ptr<FakeBankProcess>(new FakeBankProcess(log));
}

FakeBankProcess::FakeBankProcess(const std::string& log)
    : child_("fake bank", python_module_argv("tools.fake_bank", {"--port", "0", "--seed", "7"}),
             python_module_env(), log) {}

std::string FakeBankProcess::base_url() const {
  return "http://127.0.0.1:" + std::to_string(child_.port());
}

bool FakeBankProcess::reset() const {
  httplib::Client client("127.0.0.1", child_.port());
  const auto reply = client.Post("/admin/reset");
  return reply && reply->status == 200;
}

bool FakeBankProcess::set_faults(const std::string& json) const {
  httplib::Client client("127.0.0.1", child_.port());
  const auto reply = client.Post("/admin/faults", json, "application/json");
  return reply && reply->status == 200;
}

std::optional<nlohmann::json> FakeBankProcess::ledger() const {
  httplib::Client client("127.0.0.1", child_.port());
  const auto reply = client.Get("/v1/ledger");
  if (!reply || reply->status != 200) return std::nullopt;
  return nlohmann::json::parse(reply->body);
}

FakeBankProcess& shared_fake_bank() {
  static const std::unique_ptr<FakeBankProcess> bank = FakeBankProcess::start();
  return *bank;
}

}  // namespace ic::testing
