// charge-recovery: the composition root's entry. The only place that reads the environment.
#include <cstdlib>
#include <string>

#include "app/cli.hpp"

int main(int argc, char** argv) {
  const ic::aws::EnvLookup env = [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
  };
  return ic::app::run_cli(argc, argv, env);
}
