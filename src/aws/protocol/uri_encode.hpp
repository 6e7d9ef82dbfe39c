// Percent-encoding as AWS wants it, shared by the signer (canonical URI and query) and the
// query-protocol bodies (STS), so that both encode a byte the same way.
#pragma once

#include <string>
#include <string_view>

namespace ic::aws {

// RFC 3986 encoding as SigV4 wants it: everything but A-Z a-z 0-9 - _ . ~ becomes %XX
// (upper-case hex); '/' is kept only when `keep_slash`.
[[nodiscard]] std::string uri_encode(std::string_view raw, bool keep_slash);

}  // namespace ic::aws
