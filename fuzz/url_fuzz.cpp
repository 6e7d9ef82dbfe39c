// URL parsing, as the signer, the endpoint settings and the container provider use it: any
// text gives parts or nullopt, and the parts are consistent with the text they came from.
#include <algorithm>
#include <cctype>

#include "aws/credentials/credentials_container.hpp"
#include "fuzz_support.hpp"
#include "http/url.hpp"

int fuzz_one(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto url = ic::http::parse_url(text);
  if (!url) return 0;
  FUZZ_CHECK(!url->scheme.empty() && !url->host.empty());
  FUZZ_CHECK(std::ranges::none_of(url->scheme, [](unsigned char c) { return std::isupper(c); }));
  FUZZ_CHECK(url->path.starts_with('/'));
  FUZZ_CHECK(text.find(url->host) != std::string_view::npos);
  const auto authority = url->authority();
  FUZZ_CHECK(!authority.empty());
  (void)ic::aws::container_full_uri_allowed(*url);
  return 0;
}
