// The credential parsers and the network providers: the shared-file INI parser, the
// credentials JSON document, ISO-8601 and HTTP dates, and the IMDSv2 and container providers
// (alone and behind the caching chain) over a scripted transport whose replies are the input.
#include <map>
#include <string>

#include "aws/credentials/credentials_chain.hpp"
#include "aws/credentials/credentials_container.hpp"
#include "aws/credentials/credentials_http.hpp"
#include "aws/credentials/credentials_imds.hpp"
#include "aws/credentials/credentials_ini.hpp"
#include "aws/protocol/error_mapping.hpp"
#include "fuzz_support.hpp"
#include "http/url.hpp"

namespace {

using Env = std::map<std::string, std::string, std::less<>>;

ic::aws::EnvLookup lookup(Env env) {
  return [env = std::move(env)](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(name);
    return it == env.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
}

void check(const std::expected<ic::aws::Credentials, ic::aws::AwsError>& result) {
  if (result) {
    FUZZ_CHECK(!result->access_key_id.empty() && !result->secret_access_key.empty());
  } else {
    FUZZ_CHECK(!result.error().code.empty());
  }
}

std::string_view first_line(std::string_view& text) {
  const auto end = text.find('\n');
  const auto line = text.substr(0, end);
  text.remove_prefix(end == std::string_view::npos ? text.size() : end + 1);
  return line;
}

}  // namespace

int fuzz_one(const std::uint8_t* data, std::size_t size) {
  auto [choice, input] = ic::fuzz::select(data, size);
  switch (choice % 8) {
    case 0: {
      const auto ini = ic::aws::parse_ini(input);
      for (const auto& [name, section] : ini) {
        // Section names and keys are trimmed, as the SDKs read them.
        FUZZ_CHECK(name.empty() || (name.front() != ' ' && name.back() != ' '));
        for (const auto& [key, value] : section) FUZZ_CHECK(!key.empty() && key.front() != ' ');
      }
      break;
    }
    case 1:
      check(ic::aws::credentials_http::parse_document(input, "fuzz"));
      break;
    case 2:
      if (const auto t = ic::aws::credentials_http::parse_iso8601(input)) {
        FUZZ_CHECK(input.size() >= 20);
      }
      break;
    case 3:
      if (const auto t = ic::aws::parse_http_date(input)) FUZZ_CHECK(input.size() == 29);
      break;
    case 4: {
      auto transport = ic::fuzz::scripted(input);
      ic::aws::ImdsCredentialsProvider imds(lookup({}), transport.blocking());
      check(imds.credentials());
      break;
    }
    case 5: {
      auto transport = ic::fuzz::scripted(input);
      ic::aws::ContainerCredentialsProvider container(
          lookup({{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/x"}}),
          transport.blocking());
      check(container.credentials());
      break;
    }
    case 6: {
      // The first two lines are the FULL_URI and the token the environment would give.
      const std::string uri(first_line(input));
      const std::string token(first_line(input));
      auto transport = ic::fuzz::scripted(input);
      ic::aws::ContainerCredentialsProvider container(
          lookup({{"AWS_CONTAINER_CREDENTIALS_FULL_URI", uri},
                  {"AWS_CONTAINER_AUTHORIZATION_TOKEN", token}}),
          transport.blocking());
      check(container.credentials());
      break;
    }
    default: {
      // The chain asks the container twice and checks each answer against the clock.
      auto transport = ic::fuzz::scripted(input);
      const ic::testing::ManualClock clock{ic::fuzz::kFuzzNow};
      const auto chain = ic::aws::make_default_credentials_chain(
          lookup({{"AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "/v2/credentials/x"},
                  {"AWS_EC2_METADATA_DISABLED", "true"}}),
          transport.blocking(), clock);
      check(chain->credentials());
      check(chain->credentials());
      break;
    }
  }
  return 0;
}
