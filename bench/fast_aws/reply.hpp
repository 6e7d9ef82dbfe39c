// A reply of either service, and the errors both services answer alike.
#pragma once

#include <microhttpd.h>

#include <string>
#include <string_view>

namespace ic::bench::fast_aws {

struct Reply {
  unsigned int status = MHD_HTTP_OK;
  std::string body;
  std::string query_error;  // SQS: the x-amzn-query-error header, "Code;Sender"
};

Reply ok(std::string body);

// {"__type":type,"message":message} with `status`.
Reply typed_error(std::string_view type, std::string_view message, unsigned int status);

// Both services answer an operation they do not have, and a body that is not a JSON object,
// with the same coral types.
Reply unknown_operation(std::string_view target);
Reply serialization_error();

}  // namespace ic::bench::fast_aws
