// The string-building half of SigV4 (task 1 of the AWS spec): canonical URI, query and
// headers. Pure functions, no crypto, so each rule can be tested on its own.
#pragma once

#include <string>
#include <string_view>

#include "http/http_transport.hpp"

namespace ic::aws::sigv4 {

// Path as sent on the wire -> canonical URI for every service but S3: dot segments removed,
// empty segments dropped, a trailing '/' kept, then each segment encoded once more (the
// SDKs "double-encode": a '%' already on the wire becomes %25).
[[nodiscard]] std::string canonical_uri(std::string_view path);

// Query as sent on the wire -> each name and value percent-decoded and re-encoded, "name="
// for a bare name, pairs sorted by name then value, joined with '&'.
[[nodiscard]] std::string canonical_query(std::string_view query);

struct CanonicalHeaders {
  std::string block;           // "name:value\n" per header, sorted by name
  std::string signed_headers;  // "name1;name2"
};

// Names lower-cased; values trimmed with inner whitespace runs (including folded lines)
// collapsed to one space; repeated names joined with ',' in request order. http::Headers that
// hops or proxies rewrite (user-agent, expect, ...) and authorization itself are not signed.
[[nodiscard]] CanonicalHeaders canonical_headers(const http::Headers& headers);

}  // namespace ic::aws::sigv4
