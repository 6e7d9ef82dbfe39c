// Replies and the errors both services share (reply.hpp).
#include "fast_aws/reply.hpp"

#include <utility>

#include "fast_aws/json_text.hpp"

namespace ic::bench::fast_aws {

Reply ok(std::string body) {
  return Reply{.status = MHD_HTTP_OK, .body = std::move(body)};
}

Reply typed_error(std::string_view type, std::string_view message, unsigned int status) {
  Reply reply{.status = status};
  reply.body = R"({"__type":)";
  put_string(reply.body, type);
  reply.body += R"(,"message":)";
  put_string(reply.body, message);
  reply.body += '}';
  return reply;
}

Reply unknown_operation(std::string_view target) {
  return typed_error("com.amazon.coral.service#UnknownOperationException",
                     std::string("fast_aws does not implement ") + std::string(target), 400);
}

Reply serialization_error() {
  return typed_error("com.amazon.coral.service#SerializationException",
                     "the request body is not a JSON object", 400);
}

}  // namespace ic::bench::fast_aws
