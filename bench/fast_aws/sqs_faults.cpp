// SQS's errors as replies (sqs_faults.hpp).
#include "fast_aws/sqs_faults.hpp"

namespace ic::bench::fast_aws {

Reply sqs_error(const SqsFault& fault, std::string_view message) {
  Reply reply =
      typed_error(std::string("com.amazonaws.sqs#") + std::string(fault.type), message, 400);
  reply.query_error = std::string(fault.query) + ";Sender";
  return reply;
}

}  // namespace ic::bench::fast_aws
