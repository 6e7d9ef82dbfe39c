#include "core/random.hpp"

namespace ic {
namespace {

double sample(std::mt19937_64& engine) {
  return std::uniform_real_distribution<double>(0.0, 1.0)(engine);
}

class ThreadLocalRandom final : public Random {
 public:
  [[nodiscard]] double uniform01() override {
    thread_local std::mt19937_64 engine{std::random_device{}()};
    return sample(engine);
  }
};

}  // namespace

Random& real_random() {
  static ThreadLocalRandom random;
  return random;
}

double SeededRandom::uniform01() {
  MutexLock lock(mutex_);
  return sample(engine_);
}

}  // namespace ic
