#include "core/backoff.hpp"

#include <algorithm>
#include <cstdint>

namespace ic {
namespace {

Millis ceiling_of(int attempt, Millis base, Millis cap) {
  const Millis limit = std::max(cap, Millis{0});
  Millis ceiling = std::clamp(base, Millis{0}, limit);
  for (int i = 0; i < attempt && ceiling > Millis{0} && ceiling < limit; ++i) {
    ceiling = ceiling > limit / 2 ? limit : ceiling * 2;  // never overflows
  }
  return ceiling;
}

double unit(Random& random) {
  const double u = random.uniform01();
  if (!(u > 0.0)) return 0.0;  // also NaN
  return std::min(u, 1.0);
}

// u * span, truncated; u = 1 gives span itself, even where a double cannot hold it exactly.
Millis scaled(double u, Millis span) {
  const double product = u * static_cast<double>(span.count());
  if (product >= static_cast<double>(span.count())) return span;
  return Millis{static_cast<std::int64_t>(product)};
}

}  // namespace

Millis backoff_delay(int attempt, Millis base, Millis cap, Jitter mode, Random& random) {
  const Millis ceiling = ceiling_of(attempt, base, cap);
  switch (mode) {
    case Jitter::None:
      return ceiling;
    case Jitter::Full:
      return scaled(unit(random), ceiling);
    case Jitter::Equal: {
      const Millis half = ceiling / 2;
      return half + scaled(unit(random), ceiling - half);
    }
  }
  return ceiling;
}

}  // namespace ic
