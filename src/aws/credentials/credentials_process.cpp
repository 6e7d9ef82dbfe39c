// credential_process: run, bound, parse.
#include "aws/credentials/credentials_process.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "aws/credentials/command_line.hpp"
#include "aws/credentials/credentials_common.hpp"
#include "aws/credentials/credentials_http.hpp"

namespace ic::aws {
namespace {

constexpr std::string_view kSource = "credential_process";
constexpr std::size_t kMaxStderrExcerpt = 200;

std::string printable_excerpt(std::string_view text) {
  std::string out;
  for (char c : text.substr(0, kMaxStderrExcerpt)) out += (c >= ' ' && c <= '~') ? c : ' ';
  if (text.size() > kMaxStderrExcerpt) out += "...";
  return out;
}

AwsError invalid_field(std::string_view what) {
  return credentials_invalid(fmt::format("{}: output {}", kSource, what));
}

// The string member `name`: nullopt when absent, an error when present with another type.
std::expected<std::optional<std::string>, AwsError> optional_string(const nlohmann::json& doc,
                                                                    const char* name) {
  const auto it = doc.find(name);
  if (it == doc.end()) return std::nullopt;
  if (!it->is_string())
    return std::unexpected(invalid_field(fmt::format("{} is not a string", name)));
  return it->get<std::string>();
}

}  // namespace

std::expected<Credentials, AwsError> parse_process_output(std::string_view out) {
  const auto doc = nlohmann::json::parse(out, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return std::unexpected(invalid_field("is not a JSON object"));
  const auto version = doc.find("Version");
  if (version == doc.end() || !version->is_number_integer() || *version != 1) {
    return std::unexpected(invalid_field("needs \"Version\": 1"));
  }
  Credentials creds;
  for (const auto& [name, target, required] :
       {std::tuple{"AccessKeyId", &creds.access_key_id, true},
        std::tuple{"SecretAccessKey", &creds.secret_access_key, true},
        std::tuple{"SessionToken", &creds.session_token, false}}) {
    auto value = optional_string(doc, name);
    if (!value) return std::unexpected(std::move(value.error()));
    if (required && (!*value || (*value)->empty())) {
      return std::unexpected(invalid_field(fmt::format("lacks {}", name)));
    }
    *target = value->value_or("");
  }
  auto expiration = optional_string(doc, "Expiration");
  if (!expiration) return std::unexpected(std::move(expiration.error()));
  if (*expiration) {
    creds.expiration = credentials_http::parse_iso8601(**expiration);
    if (!creds.expiration) return std::unexpected(invalid_field("Expiration is not ISO-8601"));
  }
  return creds;
}

std::expected<Credentials, AwsError> process_credentials(std::string_view command,
                                                         const ProcessLimits& limits) {
  auto argv = split_command_line(command);
  if (!argv) return std::unexpected(credentials_invalid(std::move(argv.error())));
  auto done = run_process(*argv, limits);
  if (!done) {
    return std::unexpected(AwsError{
        {.error_class = done.error().timed_out ? ErrorClass::Retryable : ErrorClass::Permanent,
         .code = "CredentialsFetchFailed",
         .message = fmt::format("{} {}: {}", kSource, (*argv)[0], done.error().reason)}});
  }
  if (done->exit_status != 0) {
    return std::unexpected(
        AwsError{{.error_class = ErrorClass::Permanent,
                  .code = "CredentialsFetchFailed",
                  .message = fmt::format("{} {} exited with status {}: {}", kSource, (*argv)[0],
                                         done->exit_status, printable_excerpt(done->err))}});
  }
  return parse_process_output(done->out);
}

}  // namespace ic::aws
