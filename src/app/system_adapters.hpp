// The process's real clock, token source and identity, for the composition root.
#pragma once

#include <string>

#include "core/time.hpp"
#include "domain/ports.hpp"

namespace ic::app {

class SystemClock final : public Clock {
 public:
  [[nodiscard]] Instant now() const override;
};

// 128 random bits from OpenSSL's CSPRNG, hex encoded: unguessable fencing tokens.
class RandomTokens final : public charge::TokenSource {
 public:
  [[nodiscard]] std::string next() override;
};

// host/pid/short random suffix, recorded as `owner` on every claim for diagnosis.
[[nodiscard]] std::string worker_identity();

}  // namespace ic::app
