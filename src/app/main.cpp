// charge-recovery: the composition root's entry. The only place that reads the environment.
#include <malloc.h>

#include <cstdlib>
#include <string>

#include "app/cli.hpp"

int main(int argc, char** argv) {
  // glibc gives each of `run`'s 40-odd threads an arena of its own, up to 8 per core, and each
  // keeps the memory it once held: most of the resident size at 32 workers. The threads spend
  // their time waiting on the network, so two shared arenas cost no measurable contention.
  mallopt(M_ARENA_MAX, 2);
  const ic::aws::EnvLookup env = [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
  };
  return ic::app::run_cli(argc, argv, env);
}
