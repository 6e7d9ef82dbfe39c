// Test helpers: a fake environment for EnvLookup, a scratch directory, and the secrets that
// must never show up in an error message.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <string>

#include "aws/protocol/aws_error.hpp"
#include "aws/protocol/endpoints.hpp"

namespace ic::testing {

inline constexpr std::string_view kSecretKey = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYSECRET";
inline constexpr std::string_view kSessionToken = "FwoGZXIvYXdzSESSIONTOKENSECRET";
inline constexpr std::string_view kAuthToken = "eks-pod-identity-AUTHTOKENSECRET";

using FakeEnv = std::map<std::string, std::string, std::less<>>;

// The lookup reads `env` at call time, so a test may change it between calls.
inline aws::EnvLookup lookup(const FakeEnv& env) {
  return [&env](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(name);
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

inline void expect_no_secret(const aws::AwsError& error) {
  for (const auto secret : {kSecretKey, kSessionToken, kAuthToken}) {
    EXPECT_EQ(error.message.find(secret), std::string::npos) << error.message;
    EXPECT_EQ(error.code.find(secret), std::string::npos) << error.code;
    EXPECT_EQ(error.response_body.find(secret), std::string::npos) << error.response_body;
  }
}

// A fresh directory under the system temp dir, removed with everything in it.
class ScratchDir {
 public:
  ScratchDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("ic-aws-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  // Writes `content` to `relative` (creating parent directories); returns the full path.
  std::string write(const std::string& relative, std::string_view content) const {
    const auto file = path_ / relative;
    std::filesystem::create_directories(file.parent_path());
    std::ofstream(file, std::ios::binary | std::ios::trunc) << content;
    return file.string();
  }
  [[nodiscard]] std::string path() const { return path_.string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace ic::testing
