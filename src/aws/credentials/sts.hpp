// The one STS call the credential chain makes: AssumeRoleWithWebIdentity, over the query
// protocol (form-encoded POST, XML reply). It is unsigned -- the web identity token is the
// credential -- so it needs no credentials to get credentials.
//
//   POST {endpoint}/   Content-Type: application/x-www-form-urlencoded; charset=utf-8
//   Action=AssumeRoleWithWebIdentity&Version=2011-06-15&RoleArn=..&RoleSessionName=..
//   &WebIdentityToken=..
//
//   200 <AssumeRoleWithWebIdentityResponse><AssumeRoleWithWebIdentityResult><Credentials>
//         <AccessKeyId/><SecretAccessKey/><SessionToken/><Expiration/></Credentials>...
//   4xx/5xx <ErrorResponse><Error><Type/><Code/><Message/></Error>...</ErrorResponse>
//
// The request builder and both parsers are plain functions of strings, so they can be tested
// and fuzzed without a network.
#pragma once

#include <expected>
#include <string>
#include <string_view>

#include "aws/credentials/credentials.hpp"
#include "aws/protocol/aws_error.hpp"
#include "http/http_transport.hpp"

namespace ic::aws::sts {

struct WebIdentityRequest {
  std::string role_arn;
  std::string session_name;
  std::string token;  // the OIDC token itself, never logged
};

// [\w+=,.@-]{2,64}, what STS accepts as RoleSessionName.
[[nodiscard]] bool valid_session_name(std::string_view name);

// The unsigned request to `endpoint` (scheme://host[:port], no trailing slash).
[[nodiscard]] http::HttpRequest assume_role_with_web_identity_request(
    std::string_view endpoint, const WebIdentityRequest& request);

// A 2xx body: AccessKeyId, SecretAccessKey, SessionToken and an ISO-8601 Expiration are all
// required. Any other shape is InvalidCredentials naming what is wrong, never a value.
[[nodiscard]] std::expected<Credentials, AwsError> parse_assume_role_response(
    std::string_view body);

// A non-2xx reply: the code from ErrorResponse/Error/Code (when it looks like a code), the
// message cut to 200 printable characters, classified as the standard retry mode does, with
// IDPCommunicationError transient as the SDKs treat it. The body is not kept.
[[nodiscard]] AwsError parse_error_response(long http_status, std::string_view body);

}  // namespace ic::aws::sts
