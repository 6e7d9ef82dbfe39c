// Test helper: an IMDSv2 look-alike on a LocalHttpServer. Enforces the token protocol like the
// real service: PUT /latest/api/token needs the TTL header, metadata GETs need the token (401
// otherwise). Each credentials answer carries a new key id ("ASIAIMDS1", "ASIAIMDS2", ...).
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <chrono>

#include "core/thread_annotations.hpp"
#include "testing/aws_env.hpp"
#include "testing/local_http_server.hpp"

namespace ic::testing {

class FakeImds {
 public:
  // `expiration` is written into every credentials document.
  explicit FakeImds(std::string expiration = "2026-11-30T10:00:00Z",
                    std::string role = "app-role") {
    auto& routes = server_.routes();
    routes.Put("/latest/api/token", [](const httplib::Request& req, httplib::Response& res) {
      if (!req.has_header("x-aws-ec2-metadata-token-ttl-seconds")) {
        res.status = 400;
        return;
      }
      res.set_content(std::string(kToken), "text/plain");
    });
    routes.Get("/latest/meta-data/iam/security-credentials/",
               [role](const httplib::Request& req, httplib::Response& res) {
                 if (!authorised(req, res)) return;
                 res.set_content(role, "text/plain");
               });
    routes.Get("/latest/meta-data/iam/security-credentials/" + role,
               [this, expiration](const httplib::Request& req, httplib::Response& res) {
                 if (!authorised(req, res)) return;
                 if (credentials_status_ != 200) {
                   res.status = credentials_status_;
                   return;
                 }
                 res.set_content(
                     fmt::format(R"({{"Code":"{}","LastUpdated":"2026-11-30T04:00:00Z",)"
                                 R"("Type":"AWS-HMAC","AccessKeyId":"ASIAIMDS{}",)"
                                 R"("SecretAccessKey":"{}","Token":"{}","Expiration":"{}"}})",
                                 code(), ++served_, kSecretKey, kSessionToken, expiration),
                     "application/json");
               });
    // The client's connections stay with its thread's loop (event/run_blocking.hpp): without
    // this, stopping would wait out their keep-alive.
    server_.close_connections_after_each_request();
    server_.start();
  }

  static constexpr std::string_view kToken = "AQAEAIMDSv2-session-token";

  [[nodiscard]] std::string url() const { return server_.url(); }
  [[nodiscard]] std::vector<RecordedRequest> requests() const { return server_.requests(); }
  [[nodiscard]] int served() const { return served_; }
  void set_code(std::string code) {
    MutexLock lock(mutex_);
    code_ = std::move(code);
  }
  void set_credentials_status(int status) { credentials_status_ = status; }

 private:
  std::string code() const {
    MutexLock lock(mutex_);
    return code_;
  }
  static bool authorised(const httplib::Request& req, httplib::Response& res) {
    if (req.get_header_value("x-aws-ec2-metadata-token") == kToken) return true;
    res.status = 401;
    return false;
  }

  std::atomic<int> served_{0};
  std::atomic<int> credentials_status_{200};
  mutable Mutex mutex_;
  std::string code_ GUARDED_BY(mutex_) = "Success";
  // Last, so it is destroyed first: its threads stop (and are joined) before the state their
  // handlers read goes away.
  LocalHttpServer server_;
};

}  // namespace ic::testing
