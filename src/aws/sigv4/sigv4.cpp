// SigV4 signing: canonical request -> string to sign -> HMAC chain -> Authorization.
#include "aws/sigv4/sigv4.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <stdexcept>

#include "aws/sigv4/sigv4_canonical.hpp"
#include "core/hex.hpp"
#include "core/sha256.hpp"
#include "http/url.hpp"

namespace ic::aws {
namespace {

constexpr std::string_view kAlgorithm = "AWS4-HMAC-SHA256";
using Digest = Sha256Digest;

std::string_view view(const Digest& d) {
  return {reinterpret_cast<const char*>(d.data()), d.size()};
}

// HMAC (RFC 2104) on the toolkit's SHA-256 rather than OpenSSL's HMAC(), which resolves the
// digest by name on every call: that costs more than hashing a request.
Digest hmac(std::string_view key, std::string_view data) {
  constexpr std::size_t kBlock = 64;
  Digest hashed_key{};
  if (key.size() > kBlock) {
    hashed_key = sha256({key});
    key = view(hashed_key);
  }
  std::array<char, kBlock> inner_pad{};
  std::array<char, kBlock> outer_pad{};
  for (std::size_t i = 0; i < kBlock; ++i) {
    const auto k = i < key.size() ? static_cast<unsigned char>(key[i]) : 0;
    inner_pad[i] = static_cast<char>(k ^ 0x36);
    outer_pad[i] = static_cast<char>(k ^ 0x5c);
  }
  const auto inner = sha256({std::string_view(inner_pad.data(), kBlock), data});
  return sha256({std::string_view(outer_pad.data(), kBlock), view(inner)});
}

// The key changes once a day per secret, region and service; deriving it is four of the five
// HMACs of a signature, so each thread keeps the last few: the consumer's loop signs for SQS and
// DynamoDB in turn, and one entry made every switch of service derive its key again. Only this
// thread can read them.
Digest signing_key(std::string_view secret, std::string_view date, std::string_view region,
                   std::string_view service) {
  struct Cached {
    std::string secret, date, region, service;
    Digest key{};
  };
  constexpr std::size_t kKept = 4;  // services a process signs for: SQS, DynamoDB, STS
  thread_local std::array<Cached, kKept> cache;
  thread_local std::size_t next = 0;
  for (const Cached& entry : cache) {
    if (entry.secret == secret && entry.date == date && entry.region == region &&
        entry.service == service) {
      return entry.key;
    }
  }
  const auto k_date = hmac(fmt::format("AWS4{}", secret), date);
  const auto k_region = hmac(view(k_date), region);
  const auto k_service = hmac(view(k_region), service);
  Cached& slot = cache[next];
  next = (next + 1) % kKept;
  slot = {std::string(secret), std::string(date), std::string(region), std::string(service),
          hmac(view(k_service), "aws4_request")};
  return slot.key;
}

// "20150830T123600Z"
std::string amz_date(std::chrono::system_clock::time_point time) {
  const auto secs = std::chrono::floor<std::chrono::seconds>(time);
  const auto day = std::chrono::floor<std::chrono::days>(secs);
  const std::chrono::year_month_day ymd{day};
  const std::chrono::hh_mm_ss hms{secs - day};
  return fmt::format("{:04}{:02}{:02}T{:02}{:02}{:02}Z", static_cast<int>(ymd.year()),
                     static_cast<unsigned>(ymd.month()), static_cast<unsigned>(ymd.day()),
                     hms.hours().count(), hms.minutes().count(), hms.seconds().count());
}

bool iequals(std::string_view a, std::string_view b) {
  constexpr auto lower = [](char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; };
  return std::ranges::equal(a, b, [&](char x, char y) { return lower(x) == lower(y); });
}

bool has_header(const http::Headers& headers, std::string_view name) {
  return std::ranges::any_of(headers, [&](const auto& h) { return iequals(h.first, name); });
}

void erase_header(http::Headers& headers, std::string_view name) {
  std::erase_if(headers, [&](const auto& h) { return iequals(h.first, name); });
}

}  // namespace

SigningArtifacts compute_signature(const http::HttpRequest& request, const Credentials& credentials,
                                   const SigningParams& params) {
  const auto url = http::parse_url(request.url);
  if (!url) throw std::invalid_argument("sigv4: request.url is not an absolute URL");

  const auto headers = sigv4::canonical_headers(request.headers);
  SigningArtifacts out;
  out.canonical_request =
      fmt::format("{}\n{}\n{}\n{}\n{}\n{}", request.method, sigv4::canonical_uri(url->path),
                  sigv4::canonical_query(url->query), headers.block, headers.signed_headers,
                  to_hex(sha256({request.body})));

  const auto date_time = amz_date(params.time);
  const std::string_view date = std::string_view(date_time).substr(0, 8);
  const auto scope = fmt::format("{}/{}/{}/aws4_request", date, params.region, params.service);
  out.string_to_sign = fmt::format("{}\n{}\n{}\n{}", kAlgorithm, date_time, scope,
                                   to_hex(sha256({out.canonical_request})));

  const auto signature = to_hex(
      hmac(view(signing_key(credentials.secret_access_key, date, params.region, params.service)),
           out.string_to_sign));

  out.authorization =
      fmt::format("{} Credential={}/{}, SignedHeaders={}, Signature={}", kAlgorithm,
                  credentials.access_key_id, scope, headers.signed_headers, signature);
  return out;
}

void sign_request(http::HttpRequest& request, const Credentials& credentials,
                  const SigningParams& params) {
  // A retry re-signs the same request: drop what the previous attempt added.
  erase_header(request.headers, "authorization");
  erase_header(request.headers, "x-amz-date");
  erase_header(request.headers, "x-amz-security-token");
  if (!has_header(request.headers, "host")) {
    const auto url = http::parse_url(request.url);
    if (!url) throw std::invalid_argument("sigv4: request.url is not an absolute URL");
    request.headers.emplace_back("host", url->authority());
  }
  request.headers.emplace_back("x-amz-date", amz_date(params.time));
  if (!credentials.session_token.empty()) {
    request.headers.emplace_back("x-amz-security-token", credentials.session_token);
  }
  auto artifacts = compute_signature(request, credentials, params);
  request.headers.emplace_back("authorization", std::move(artifacts.authorization));
}

}  // namespace ic::aws
