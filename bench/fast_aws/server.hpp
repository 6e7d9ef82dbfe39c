// The HTTP side: requests routed by X-Amz-Target to SQS or DynamoDB, and the libmicrohttpd
// callbacks that read their bodies and send their replies.
#pragma once

#include <microhttpd.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "fast_aws/dynamodb.hpp"
#include "fast_aws/reply.hpp"
#include "fast_aws/request.hpp"
#include "fast_aws/sqs.hpp"

namespace ic::bench::fast_aws {

class Server {
 public:
  Sqs& sqs() { return sqs_; }

  // The reply to a complete request, or nullopt when a long poll suspended its connection.
  std::optional<Reply> handle(Request& request, std::string_view method, std::string_view url);

  std::string request_id();

 private:
  Sqs sqs_;
  DynamoDb dynamodb_;
  std::atomic<std::uint64_t> next_request_{1};
};

// The MHD_AccessHandlerCallback; its cls is the Server.
MHD_Result answer(void* cls, MHD_Connection* connection, const char* url, const char* method,
                  const char* version, const char* upload_data, std::size_t* upload_data_size,
                  void** request_state);

// The MHD_OPTION_NOTIFY_COMPLETED callback: frees what answer() allocated for the request.
void completed(void* cls, MHD_Connection* connection, void** request_state,
               MHD_RequestTerminationCode code);

}  // namespace ic::bench::fast_aws
