// Runs every case of AWS's official SigV4 test suite (as shipped with botocore) against the
// signer: canonical request, string to sign and Authorization must match byte for byte.
// The suite is vendored in the repository at tests/vectors/aws4_testsuite (see
// tests/vectors/README.md); $AWS4_TESTSUITE_DIR overrides it. One ctest entry per case.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "aws/sigv4/sigv4.hpp"

namespace ic::aws {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

fs::path suite_dir() {
  if (const char* dir = std::getenv("AWS4_TESTSUITE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  return fs::path(IC_SOURCE_DIR) / "tests" / "vectors" / "aws4_testsuite";
}

// The suite as vendored: 34 cases, nested ones included. A smaller number means files went
// missing, which must fail rather than quietly run fewer cases.
constexpr std::size_t kExpectedCaseCount = 34;

struct SkippedCase {
  std::string_view name;
  std::string_view reason;
};
// Cases this signer cannot run. botocore skips normalize-path/get-space and the three
// get-vanilla-query-order-* cases because of limits of Python's HTTP parser and of its query
// handling; this signer passes all four, so nothing is skipped.
constexpr std::array<SkippedCase, 0> kSkippedCases{};
constexpr std::array<std::string_view, 4> kSkippedByBotocore = {
    "normalize-path/get-space", "get-vanilla-query-order-key-case", "get-vanilla-query-order-key",
    "get-vanilla-query-order-value"};

// post-sts-header-after: the token is appended after signing (services that do not sign it),
// so it is not part of the credentials the request is signed with (post-sts-token/readme.txt).
constexpr std::string_view kTokenAddedAfterSigning = "post-sts-token/post-sts-header-after";

struct VectorCase {
  std::string name;  // path relative to the suite, e.g. "normalize-path/get-space"
  fs::path stem;     // <dir>/<case>, to which .req/.creq/... are appended
};

// Shown by gtest (and so in ctest's listing) instead of the object's bytes.
void PrintTo(const VectorCase& c, std::ostream* os) {
  *os << c.name;
}

std::vector<VectorCase> discover_cases() {
  std::vector<VectorCase> cases;
  const auto root = suite_dir();
  std::error_code ec;
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_directory()) continue;
    const auto stem = it->path() / it->path().filename();
    if (!fs::exists(fs::path(stem).concat(".req"))) continue;
    cases.push_back({fs::relative(it->path(), root).generic_string(), stem});
  }
  std::ranges::sort(cases, {}, &VectorCase::name);
  return cases;
}

std::string read_file(fs::path path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error("cannot read " + path.string());
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

std::string file_of(const VectorCase& c, std::string_view ext) {
  return read_file(fs::path(c.stem).concat(ext));
}

// Parses a raw HTTP/1.1 request as the suite writes it: "METHOD target HTTP/1.1", header
// lines split at the first ':', obsolete line folding (a line starting with SP/HT continues
// the previous value; RFC 7230 3.2.4 replaces the fold with SP), a blank line, the body.
// The target may contain raw spaces (get-space), so the version is taken from the right.
http::HttpRequest parse_raw_request(std::string_view raw) {
  http::HttpRequest request;
  auto next_line = [&raw]() {
    const auto nl = raw.find('\n');
    auto line = raw.substr(0, nl);
    raw = nl == std::string_view::npos ? std::string_view{} : raw.substr(nl + 1);
    if (line.ends_with('\r')) line.remove_suffix(1);
    return line;
  };
  const auto request_line = next_line();
  const auto first_space = request_line.find(' ');
  const auto last_space = request_line.rfind(' ');
  request.method = std::string(request_line.substr(0, first_space));
  const auto target = request_line.substr(first_space + 1, last_space - first_space - 1);

  while (!raw.empty()) {
    const auto line = next_line();
    if (line.empty()) break;
    if ((line.front() == ' ' || line.front() == '\t') && !request.headers.empty()) {
      request.headers.back().second += " ";
      request.headers.back().second += line;
      continue;
    }
    const auto colon = line.find(':');
    request.headers.emplace_back(std::string(line.substr(0, colon)),
                                 std::string(line.substr(colon + 1)));
  }
  request.body = std::string(raw);

  const auto host = std::ranges::find_if(request.headers, [](const auto& h) {
    return h.first.size() == 4 && std::tolower(h.first[0]) == 'h' &&
           std::tolower(h.first[1]) == 'o' && std::tolower(h.first[2]) == 's' &&
           std::tolower(h.first[3]) == 't';
  });
  request.url =
      "https://" + (host == request.headers.end() ? "" : host->second) + std::string(target);
  return request;
}

// Token the case signs with: the X-Amz-Security-Token its signed request (.sreq) carries.
std::string session_token_of(const VectorCase& c) {
  const auto sreq = parse_raw_request(file_of(c, ".sreq"));
  for (const auto& [name, value] : sreq.headers) {
    if (name == "X-Amz-Security-Token") return value;
  }
  return {};
}

const std::vector<VectorCase>& all_cases() {
  static const auto cases = discover_cases();
  return cases;
}

const SkippedCase* skip_entry(std::string_view name) {
  const auto it = std::ranges::find(kSkippedCases, name, &SkippedCase::name);
  return it == kSkippedCases.end() ? nullptr : &*it;
}

std::string test_name(const testing::TestParamInfo<VectorCase>& info) {
  std::string name = info.param.name;
  std::ranges::replace_if(
      name, [](unsigned char ch) { return std::isalnum(ch) == 0; }, '_');
  return name;
}

class Aws4Vector : public testing::TestWithParam<VectorCase> {};

TEST_P(Aws4Vector, MatchesOfficialVector) {
  const auto& c = GetParam();
  if (const auto* skip = skip_entry(c.name)) GTEST_SKIP() << skip->reason;

  Credentials credentials{.access_key_id = "AKIDEXAMPLE",
                          .secret_access_key = "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY"};
  if (c.name != kTokenAddedAfterSigning) credentials.session_token = session_token_of(c);
  const SigningParams params{
      .region = "us-east-1",
      .service = "service",
      .time = std::chrono::sys_days{std::chrono::year{2015} / 8 / 30} + 12h + 36min};

  auto request = parse_raw_request(file_of(c, ".req"));
  sign_request(request, credentials, params);
  const auto artifacts = compute_signature(request, credentials, params);

  EXPECT_EQ(artifacts.canonical_request, file_of(c, ".creq"));
  EXPECT_EQ(artifacts.string_to_sign, file_of(c, ".sts"));
  EXPECT_EQ(artifacts.authorization, file_of(c, ".authz"));
  const auto authorization = std::ranges::find(request.headers, std::string("authorization"),
                                               &std::pair<std::string, std::string>::first);
  ASSERT_NE(authorization, request.headers.end());
  EXPECT_EQ(authorization->second, file_of(c, ".authz"));
}

INSTANTIATE_TEST_SUITE_P(Aws4Testsuite, Aws4Vector, testing::ValuesIn(all_cases()), test_name);

TEST(Aws4Testsuite, IsPresentAndComplete) {
  ASSERT_TRUE(fs::is_directory(suite_dir()))
      << suite_dir() << " is missing; set AWS4_TESTSUITE_DIR to the suite";
  EXPECT_EQ(all_cases().size(), kExpectedCaseCount);
  for (const std::string_view nested :
       {"normalize-path/get-slash", "post-sts-token/post-sts-header-before"}) {
    EXPECT_TRUE(std::ranges::any_of(all_cases(), [&](const auto& c) { return c.name == nested; }))
        << nested;
  }
}

TEST(Aws4Testsuite, SkipListIsExactlyTheDocumentedOne) {
  std::size_t skipped = 0;
  for (const auto& c : all_cases()) skipped += skip_entry(c.name) != nullptr ? 1 : 0;
  EXPECT_EQ(skipped, kSkippedCases.size()) << "a listed skip names no case in the suite";
  for (const auto name : kSkippedByBotocore) {
    EXPECT_TRUE(std::ranges::any_of(all_cases(), [&](const auto& c) { return c.name == name; }))
        << name << " is not in the suite";
    EXPECT_EQ(skip_entry(name), nullptr) << name << " is run, not skipped";
  }
}

}  // namespace
}  // namespace ic::aws
