// What the bench's libmicrohttpd servers (fast_bank, fast_aws) share about their life, as
// bench/stack.py drives them: a free port on 127.0.0.1 announced on stdout as
// {"event":"listening","port":N}, served until SIGTERM or SIGINT.
#pragma once

#include <microhttpd.h>

#include <cstdint>
#include <functional>
#include <span>

namespace ic::bench {

struct MhdServer {
  unsigned int flags = 0;  // MHD_USE_*
  MHD_AccessHandlerCallback answer = nullptr;
  void* answer_cls = nullptr;
  // Options beyond the address (which this sets), without the closing MHD_OPTION_END.
  std::span<const MHD_OptionItem> options;
  // Called with the bound port before it is announced, so that what it sets up is ready
  // before any client can know the port.
  std::function<void(std::uint16_t port)> on_bound;
  // Called on the stop signal, before the daemon stops.
  std::function<void()> on_stop;
};

// Runs `server` until SIGTERM or SIGINT and returns main's exit status: 0, or 2 when the daemon
// did not start or bind (after {"event":"start_failed"} or {"event":"bind_failed"} on stderr).
int serve_until_signalled(const MhdServer& server);

}  // namespace ic::bench
