// One HTTP request, from its headers to the end of its response: what the MHD callbacks
// (server.cpp) keep between their calls, and what a suspended SQS long poll waits in.
#pragma once

#include <microhttpd.h>

#include <optional>
#include <string>

#include "fast_aws/common.hpp"

namespace ic::bench::fast_aws {

struct Request {
  MHD_Connection* connection = nullptr;
  std::string body;
  bool too_large = false;
  std::string reply;  // the response's bytes: MHD sends them from here (MHD_RESPMEM_PERSISTENT)
  // A long poll: when it ends. Set by its first pass; later passes (after a resume) keep it.
  std::optional<Steady::time_point> poll_deadline;
};

}  // namespace ic::bench::fast_aws
