// EC2 instance metadata (IMDSv2) credentials.
#include "aws/credentials/credentials_imds.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <nlohmann/json.hpp>

#include "aws/credentials/credentials_common.hpp"
#include "aws/credentials/credentials_http.hpp"

namespace ic::aws {
namespace {

constexpr std::string_view kSource = "instance metadata (IMDSv2)";
constexpr std::string_view kCredentialsPath = "/latest/meta-data/iam/security-credentials/";
constexpr std::string_view kTokenTtlSeconds = "21600";

bool is_true(std::string value) {
  std::ranges::transform(value, value.begin(),
                         [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return value == "true";
}

std::string first_line(std::string_view body) {
  auto line = body.substr(0, body.find_first_of("\r\n"));
  while (!line.empty() && std::isspace(static_cast<unsigned char>(line.back())) != 0) {
    line.remove_suffix(1);
  }
  return std::string(line);
}

}  // namespace

std::expected<std::string, AwsError> ImdsCredentialsProvider::get(const std::string& base,
                                                                  const std::string& path,
                                                                  const std::string& token) {
  const http::HttpRequest request{
      .method = "GET", .url = base + path, .headers = {{"x-aws-ec2-metadata-token", token}}};
  auto response = credentials_http::fetch(transport_, request, kSource);
  if (!response) return std::unexpected(std::move(response.error()));
  return std::move(response->body);
}

std::expected<Credentials, AwsError> ImdsCredentialsProvider::credentials() {
  if (is_true(env_value(env_, "AWS_EC2_METADATA_DISABLED").value_or(""))) {
    return std::unexpected(
        credentials_not_found(fmt::format("{}: AWS_EC2_METADATA_DISABLED=true", kSource)));
  }
  auto base =
      env_value(env_, "AWS_EC2_METADATA_SERVICE_ENDPOINT").value_or(std::string(kImdsEndpoint));
  while (base.ends_with('/')) base.pop_back();

  const http::HttpRequest token_request{
      .method = "PUT",
      .url = fmt::format("{}/latest/api/token", base),
      .headers = {{"x-aws-ec2-metadata-token-ttl-seconds", std::string(kTokenTtlSeconds)}}};
  auto token_response = credentials_http::fetch(transport_, token_request, kSource);
  if (!token_response) return std::unexpected(std::move(token_response.error()));
  const auto token = first_line(token_response->body);
  if (token.empty()) {
    return std::unexpected(credentials_invalid(fmt::format("{}: empty session token", kSource)));
  }

  auto role = get(base, std::string(kCredentialsPath), token);
  if (!role) return std::unexpected(std::move(role.error()));
  const auto role_name = first_line(*role);
  if (role_name.empty()) {
    return std::unexpected(
        credentials_not_found(fmt::format("{}: no instance profile role attached", kSource)));
  }

  auto document = get(base, std::string(kCredentialsPath) + role_name, token);
  if (!document) return std::unexpected(std::move(document.error()));
  // IMDS reports failures inside a 200 answer: {"Code": "...", ...}.
  const auto parsed = nlohmann::json::parse(*document, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_object() && parsed.contains("Code") && parsed["Code"] != "Success") {
    const auto code = parsed["Code"].is_string() ? parsed["Code"].get<std::string>() : "?";
    return std::unexpected(credentials_invalid(fmt::format("{}: Code={}", kSource, code)));
  }
  return credentials_http::parse_document(*document, kSource);
}

}  // namespace ic::aws
