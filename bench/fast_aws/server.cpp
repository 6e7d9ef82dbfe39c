// Routing and the libmicrohttpd callbacks (server.hpp).
#include "fast_aws/server.hpp"

#include <cstdio>
#include <exception>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

namespace ic::bench::fast_aws {
namespace {

using nlohmann::json;

constexpr std::size_t kMaxBody = 8U << 20U;  // far above any request SQS or DynamoDB accepts

MHD_Result send_reply(Server& server, Request& request, Reply&& reply) {
  request.reply = std::move(reply.body);
  // PERSISTENT: MHD sends from request.reply, which lives until the request completes.
  MHD_Response* response = MHD_create_response_from_buffer(
      request.reply.size(), request.reply.data(), MHD_RESPMEM_PERSISTENT);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/x-amz-json-1.0");
  MHD_add_response_header(response, "x-amzn-RequestId", server.request_id().c_str());
  if (!reply.query_error.empty()) {
    MHD_add_response_header(response, "x-amzn-query-error", reply.query_error.c_str());
  }
  const MHD_Result queued = MHD_queue_response(request.connection, reply.status, response);
  MHD_destroy_response(response);
  return queued;
}

}  // namespace

std::optional<Reply> Server::handle(Request& request, std::string_view method,
                                    std::string_view url) {
  if (method == "GET" && url == "/health") return ok(R"({"status":"ok"})");
  const char* target_header =
      MHD_lookup_connection_value(request.connection, MHD_HEADER_KIND, "X-Amz-Target");
  const std::string_view target = target_header == nullptr ? "" : target_header;
  if (method != "POST") return unknown_operation(std::string(method) + " " + std::string(url));
  if (request.too_large)
    return typed_error("com.amazon.coral.service#SerializationException", "request body too large",
                       413);
  constexpr std::string_view kSqs = "AmazonSQS.";
  constexpr std::string_view kDynamoDb = "DynamoDB_20120810.";
  const bool sqs = target.starts_with(kSqs);
  if (!sqs && !target.starts_with(kDynamoDb)) return unknown_operation(target);
  const json parsed = json::parse(request.body, nullptr, /*allow_exceptions=*/false);
  if (!parsed.is_object()) return serialization_error();
  if (sqs) return sqs_.handle(target.substr(kSqs.size()), parsed, request);
  return dynamodb_.handle(target.substr(kDynamoDb.size()), parsed);
}

std::string Server::request_id() {
  const auto n = next_request_.fetch_add(1, std::memory_order_relaxed);
  char text[40];
  std::snprintf(text, sizeof text, "00000000-0000-4000-8000-%012llx",
                static_cast<unsigned long long>(n & 0xFFFFFFFFFFFFULL));
  return text;
}

// libmicrohttpd calls this once with the headers, once per piece of the body, once at its end,
// and once more after each resume of a suspended long poll.
MHD_Result answer(void* cls, MHD_Connection* connection, const char* url, const char* method,
                  const char* /*version*/, const char* upload_data, std::size_t* upload_data_size,
                  void** request_state) {
  auto& server = *static_cast<Server*>(cls);
  if (*request_state == nullptr) {
    auto request = std::make_unique<Request>();
    request->connection = connection;
    *request_state = request.release();  // deleted by completed()
    return MHD_YES;
  }
  auto& request = *static_cast<Request*>(*request_state);
  if (*upload_data_size != 0) {
    if (request.body.size() + *upload_data_size > kMaxBody) {
      request.too_large = true;
    } else {
      request.body.append(upload_data, *upload_data_size);
    }
    *upload_data_size = 0;
    return MHD_YES;
  }
  std::optional<Reply> reply;
  try {
    reply = server.handle(request, method, url);
  } catch (const std::exception& e) {
    // Not expected (every input is checked), but a bench tool that dies mid-run loses the run.
    reply = typed_error("com.amazon.coral.service#InternalFailure", e.what(), 500);
  }
  if (!reply) return MHD_YES;  // suspended: called again once resumed
  return send_reply(server, request, std::move(*reply));
}

void completed(void* /*cls*/, MHD_Connection* /*connection*/, void** request_state,
               MHD_RequestTerminationCode /*code*/) {
  delete static_cast<Request*>(*request_state);
  *request_state = nullptr;
}

}  // namespace ic::bench::fast_aws
