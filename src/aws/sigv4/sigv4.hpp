// AWS Signature Version 4 for requests with a body in memory (all our JSON calls).
//
//   http::HttpRequest req{.method = "POST", .url = "https://dynamodb.eu-west-1.amazonaws.com/",
//   ...}; sign_request(req, credentials, {.region = "eu-west-1", .service = "dynamodb", .time =
//   now});
//   // req.headers now carry host, x-amz-date, [x-amz-security-token,] authorization
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "aws/credentials/credentials.hpp"
#include "http/http_transport.hpp"

namespace ic::aws {

struct SigningParams {
  std::string_view region;
  std::string_view service;
  std::chrono::system_clock::time_point time;
};

// The intermediate artefacts, exposed so the official test vectors can check each step.
struct SigningArtifacts {
  std::string canonical_request;
  std::string string_to_sign;
  std::string authorization;
};

// Computes the signature over `request` as it stands (headers it already has are signed).
[[nodiscard]] SigningArtifacts compute_signature(const http::HttpRequest& request,
                                                 const Credentials& credentials,
                                                 const SigningParams& params);

// Adds host (when absent), x-amz-date, x-amz-security-token (when the credentials have one)
// and authorization, then signs. Call again on every retry: the date is part of the signature.
void sign_request(http::HttpRequest& request, const Credentials& credentials,
                  const SigningParams& params);

}  // namespace ic::aws
