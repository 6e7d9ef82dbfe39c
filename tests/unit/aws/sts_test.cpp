// The STS query-protocol codec and the XML field reader under it: well-formed replies, every
// malformed or hostile shape as an error value, never an exception.
#include "aws/credentials/sts.hpp"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include "aws/protocol/query_xml.hpp"
#include "testing/aws_env.hpp"

namespace ic::aws {
namespace {

using testing::expect_no_secret;
using testing::kSecretKey;
using testing::kSessionToken;

// The shape moto and STS answer with.
std::string sts_reply(std::string_view credentials_xml) {
  return fmt::format(
      R"(<?xml version="1.0" encoding="UTF-8"?>
<AssumeRoleWithWebIdentityResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/">
  <AssumeRoleWithWebIdentityResult>
    <SubjectFromWebIdentityToken>system:serviceaccount:payments:charge-recovery</SubjectFromWebIdentityToken>
    <Credentials>{}</Credentials>
    <AssumedRoleUser><AssumedRoleId>AROA:s</AssumedRoleId><Arn>arn:aws:sts::1:assumed-role/r/s</Arn></AssumedRoleUser>
  </AssumeRoleWithWebIdentityResult>
  <ResponseMetadata><RequestId>c6104cbe-af31-11e0-8154-cbc7ccf896c7</RequestId></ResponseMetadata>
</AssumeRoleWithWebIdentityResponse>)",
      credentials_xml);
}

std::string good_credentials(std::string_view expiration = "2026-11-30T10:00:00Z") {
  return fmt::format(
      "<AccessKeyId>ASIASTS</AccessKeyId><SecretAccessKey>{}</SecretAccessKey>"
      "<SessionToken>{}</SessionToken><Expiration>{}</Expiration>",
      kSecretKey, kSessionToken, expiration);
}

TEST(XmlFields, ReadsWantedLeavesAndIgnoresTheRest) {
  const auto fields = read_xml_fields(
      R"(<a:R xmlns:a="urn:x"><a:B>one &amp; <![CDATA[two]]></a:B><C><D>3</D></C><E/></a:R>)",
      {"R/B", "R/C/D", "R/E", "R/Missing"});
  ASSERT_TRUE(fields.has_value()) << fields.error();
  EXPECT_EQ(fields->at("R/B"), "one & two");
  EXPECT_EQ(fields->at("R/C/D"), "3");
  EXPECT_EQ(fields->at("R/E"), "");
  EXPECT_FALSE(fields->contains("R/Missing"));
}

TEST(XmlFields, RefusesEveryBadShapeWithAReasonThatDoesNotQuoteTheInput) {
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += "<x>";
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "malformed XML"},
      {"not xml SECRETVALUE", "malformed XML"},
      {"<R><B>SECRETVALUE</R>", "malformed XML"},
      {"<R><B>1</B><B>SECRETVALUE</B></R>", "more than once"},
      {"<R><B><i>SECRETVALUE</i></B></R>", "not a text element"},
      {R"(<!DOCTYPE R [<!ENTITY a "SECRETVALUE"><!ENTITY b "&a;&a;&a;&a;">]><R><B>&b;</B></R>)",
       "DOCTYPE"},
      {"<R><B>&undeclared;</B></R>", "malformed XML"},
      {deep, "nested too deeply"},
      {"<R><B>" + std::string(70 * 1024, 'x') + "</B></R>", "too long"},
      {std::string(1024 * 1024 + 1, ' '), "larger than 1 MiB"},
      {std::string("<R>\0</R>", 8), "malformed XML"},
      {"<R>\xff\xfe</R>", "malformed XML"},
  };
  for (const auto& [xml, reason] : cases) {
    const auto fields = read_xml_fields(xml, {"R/B"});
    ASSERT_FALSE(fields.has_value()) << xml.substr(0, 80);
    EXPECT_NE(fields.error().find(reason), std::string::npos) << fields.error();
    EXPECT_EQ(fields.error().find("SECRETVALUE"), std::string::npos) << fields.error();
  }
}

RC_GTEST_PROP(XmlFields, AnyBytesGiveAValue, (const std::string& bytes)) {
  const auto fields = read_xml_fields(bytes, {"R/B"});
  const bool answered = fields.has_value() || !fields.error().empty();
  RC_ASSERT(answered);
}

RC_GTEST_PROP(XmlFields, AnyTextRoundTripsThroughEscaping, (const std::string& raw)) {
  // Printable ASCII only: XML cannot carry most control characters at all.
  std::string text, escaped;
  for (char c : raw) {
    if (c < ' ' || c > '~') continue;
    text += c;
    escaped += c == '<' ? "&lt;" : c == '&' ? "&amp;" : std::string(1, c);
  }
  const auto fields = read_xml_fields("<R><B>" + escaped + "</B></R>", {"R/B"});
  RC_ASSERT(fields.has_value());
  RC_ASSERT(fields->at("R/B") == text);
}

TEST(StsRequest, IsAnUnsignedFormPostWithEveryValueEncoded) {
  const auto request = sts::assume_role_with_web_identity_request(
      "http://127.0.0.1:5000", {.role_arn = "arn:aws:iam::123456789012:role/charge recovery",
                                .session_name = "s@1",
                                .token = "eyJ.a+b/c=&Action=Other"});
  EXPECT_EQ(request.method, "POST");
  EXPECT_EQ(request.url, "http://127.0.0.1:5000/");
  EXPECT_EQ(request.body,
            "Action=AssumeRoleWithWebIdentity&Version=2011-06-15"
            "&RoleArn=arn%3Aaws%3Aiam%3A%3A123456789012%3Arole%2Fcharge%20recovery"
            "&RoleSessionName=s%401&WebIdentityToken=eyJ.a%2Bb%2Fc%3D%26Action%3DOther");
  bool form = false;
  for (const auto& [name, value] : request.headers) {
    EXPECT_NE(name, "Authorization");
    form |= name == "Content-Type" && value.starts_with("application/x-www-form-urlencoded");
  }
  EXPECT_TRUE(form);
}

TEST(StsRequest, SessionNamesAsStsAcceptsThem) {
  EXPECT_TRUE(sts::valid_session_name("charge-recovery-1764460800000"));
  EXPECT_TRUE(sts::valid_session_name("a_b+c=d,e.f@g-h"));
  for (const auto* bad : {"", "a", "has space", "new\nline", "slash/no"}) {
    EXPECT_FALSE(sts::valid_session_name(bad)) << bad;
  }
  EXPECT_FALSE(sts::valid_session_name(std::string(65, 'a')));
}

TEST(StsReply, CredentialsWithExpiration) {
  const auto creds = sts::parse_assume_role_response(sts_reply(good_credentials()));
  ASSERT_TRUE(creds.has_value()) << creds.error().message;
  EXPECT_EQ(creds->access_key_id, "ASIASTS");
  EXPECT_EQ(creds->secret_access_key, kSecretKey);
  EXPECT_EQ(creds->session_token, kSessionToken);
  EXPECT_EQ(creds->expiration,
            std::chrono::sys_days{std::chrono::year{2026} / 11 / 30} + std::chrono::hours{10});
}

TEST(StsReply, EveryMissingOrBrokenFieldIsInvalidCredentials) {
  const std::string secret(kSecretKey);
  const std::vector<std::string> bodies = {
      sts_reply(""),
      sts_reply("<SecretAccessKey>" + secret + "</SecretAccessKey>"),
      sts_reply(good_credentials("tomorrow")),
      sts_reply(good_credentials("")),
      sts_reply(good_credentials() + "<AccessKeyId>ASIATWICE</AccessKeyId>"),
      "<ErrorResponse><Error><Code>x</Code></Error></ErrorResponse>",
      "{\"AccessKeyId\":\"ASIAJSON\"}",
      sts_reply(good_credentials()).substr(0, 300),
  };
  for (const auto& body : bodies) {
    const auto creds = sts::parse_assume_role_response(body);
    ASSERT_FALSE(creds.has_value()) << body;
    EXPECT_EQ(creds.error().code, "InvalidCredentials");
    expect_no_secret(creds.error());
  }
}

TEST(StsError, CodeAndMessageClassified) {
  const auto error = sts::parse_error_response(
      400, R"(<ErrorResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><Error>
      <Type>Sender</Type><Code>InvalidIdentityToken</Code>
      <Message>Token expired: current date/time 1764460800 must be before the expiration</Message>
      </Error><RequestId>r</RequestId></ErrorResponse>)");
  EXPECT_EQ(error.code, "InvalidIdentityToken");
  EXPECT_EQ(error.error_class, ErrorClass::Permanent);
  EXPECT_EQ(error.http_status, 400);
  EXPECT_NE(error.message.find("Token expired"), std::string::npos) << error.message;
  EXPECT_TRUE(error.response_body.empty());

  auto with_code = [](long status, std::string_view code) {
    return sts::parse_error_response(
        status, fmt::format("<ErrorResponse><Error><Code>{}</Code></Error></ErrorResponse>", code));
  };
  EXPECT_EQ(with_code(400, "IDPCommunicationError").error_class, ErrorClass::Retryable);
  EXPECT_EQ(with_code(400, "Throttling").error_class, ErrorClass::Throttling);
  EXPECT_EQ(with_code(503, "ServiceUnavailable").error_class, ErrorClass::Retryable);
  EXPECT_EQ(with_code(403, "AccessDenied").error_class, ErrorClass::Permanent);
}

TEST(StsError, UnreadableBodiesStillGiveAClassifiedError) {
  for (const auto* body : {"", "<html>bad gateway</html>", "<ErrorResponse><Error><Code>a b\n",
                           "<ErrorResponse><Error><Code>&lt;script&gt;</Code></Error>"
                           "</ErrorResponse>"}) {
    const auto error = sts::parse_error_response(502, body);
    EXPECT_EQ(error.code, "StsError") << body;
    EXPECT_EQ(error.error_class, ErrorClass::Retryable);
  }
  const auto long_message = sts::parse_error_response(
      400, "<ErrorResponse><Error><Code>X</Code><Message>" + std::string(5000, 'm') +
               "\x01</Message></Error></ErrorResponse>");
  EXPECT_LT(long_message.message.size(), 300u);
}

RC_GTEST_PROP(StsReply, AnyBytesGiveAValue, (const std::string& bytes)) {
  const auto creds = sts::parse_assume_role_response(bytes);
  RC_ASSERT(!creds.has_value());
  const auto error = sts::parse_error_response(400, bytes);
  RC_ASSERT(!error.code.empty());
}

}  // namespace
}  // namespace ic::aws
