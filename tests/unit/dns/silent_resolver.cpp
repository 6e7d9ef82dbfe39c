#include "silent_resolver.hpp"

#include <dlfcn.h>
#include <netdb.h>

#include <chrono>
#include <condition_variable>
#include <mutex>

namespace ic::testing {
namespace {

std::mutex mutex;
std::condition_variable released_cv;
bool released = false;
int waiting = 0;
int started = 0;

int wait_silently() {
  std::unique_lock lock(mutex);
  ++started;
  ++waiting;
  released_cv.wait_for(lock, std::chrono::seconds(10), [] { return released; });
  --waiting;
  return EAI_AGAIN;
}

}  // namespace

int silent_lookups_waiting() {
  const std::lock_guard lock(mutex);
  return waiting;
}

int silent_lookups_started() {
  const std::lock_guard lock(mutex);
  return started;
}

void release_silent_lookups() {
  {
    const std::lock_guard lock(mutex);
    released = true;
  }
  released_cv.notify_all();
}

}  // namespace ic::testing

extern "C" int getaddrinfo(const char* node, const char* service, const addrinfo* hints,
                           addrinfo** res) {
  using Real = int (*)(const char*, const char*, const addrinfo*, addrinfo**);
  static const auto real = reinterpret_cast<Real>(dlsym(RTLD_NEXT, "getaddrinfo"));
  if (node != nullptr && node == ic::testing::kSilentHost) return ic::testing::wait_silently();
  return real(node, service, hints, res);
}
