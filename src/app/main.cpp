// charge-recovery: the composition root's entry. The only place that reads the environment.
#include <malloc.h>
#include <sys/resource.h>

#include <cstdlib>
#include <string>

#include "app/cli.hpp"
#include "core/thread_guard.hpp"
#include "observability/json_log.hpp"

namespace {

// The main thread's boundary, like every other thread's: one JSON line, then exit 1.
class LogToStderr final : public ic::ThreadFailureObserver {
 public:
  void on_thread_exception(std::string_view thread, std::string_view what) noexcept override {
    try {
      ic::observability::Logger(ic::observability::LogLevel::Error)
          .error("exception reached a thread boundary", {{"thread", thread}, {"detail", what}});
    } catch (...) {  // noexcept: a report that fails must not terminate
    }
  }
};

}  // namespace

int main(int argc, char** argv) {
  // glibc gives each thread an arena of its own, up to 8 per core, and each keeps the memory it
  // once held; the event loop's thread does nearly all the allocating, the few others little,
  // so two shared arenas cost no measurable contention. Not thread-safe, which is why it runs
  // first: no other thread exists yet.
  mallopt(M_ARENA_MAX, 2);  // NOLINT(concurrency-mt-unsafe)
  // Every charge in flight may hold a connection to the bank and one to DynamoDB: at WORKERS=1024
  // that is past the usual soft limit of 1,024 descriptors. The hard limit is the operator's.
  rlimit files{};
  if (getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    setrlimit(RLIMIT_NOFILE, &files);
  }
  const ic::aws::EnvLookup env = [](std::string_view name) -> std::optional<std::string> {
    const char* value = std::getenv(std::string(name).c_str());
    return value != nullptr ? std::optional<std::string>(value) : std::nullopt;
  };
  LogToStderr report;
  int code = 1;
  ic::run_guarded("main", &report, [&] { code = ic::app::run_cli(argc, argv, env); });
  return code;
}
