// The process's real token source and identity, for the composition root.
#pragma once

#include <string>
#include <string_view>

#include "domain/ports.hpp"

namespace ic::app {

// 128 random bits from OpenSSL's CSPRNG, hex encoded: unguessable fencing tokens.
class RandomTokens final : public domain::TokenSource {
 public:
  [[nodiscard]] std::string next() override;
};

// host/pid/short random suffix, recorded as `owner` on every claim for diagnosis.
[[nodiscard]] std::string worker_identity();

// user@host, the default `actor` of an operator's audit entry: USER from `user` (the
// environment), the host from gethostname.
[[nodiscard]] std::string operator_identity(std::string_view user);

}  // namespace ic::app
