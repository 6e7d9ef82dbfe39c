// The process's real token source and identity, for the composition root.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "domain/ports.hpp"

namespace ic::app {

// 128 random bits from OpenSSL's CSPRNG, hex encoded: unguessable fencing tokens. Drawn from
// OpenSSL kTokensPerDraw tokens at a time into a block of the calling thread, each byte used
// once; a child forked from the process starts without its parent's block.
class RandomTokens final : public domain::TokenSource {
 public:
  static constexpr std::size_t kTokenBytes = 16;
  static constexpr std::size_t kTokensPerDraw = 64;

  [[nodiscard]] std::string next() override;
};

// host/pid/short random suffix, recorded as `owner` on every claim for diagnosis.
[[nodiscard]] std::string worker_identity();

// user@host, the default `actor` of an operator's audit entry: USER from `user` (the
// environment), the host from gethostname.
[[nodiscard]] std::string operator_identity(std::string_view user);

}  // namespace ic::app
