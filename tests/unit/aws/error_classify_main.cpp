// Test-only: for each "protocol status type query-error" line on stdin (protocol json, or xml
// for STS's query protocol; query-error "-" for none), builds the error reply AWS would send
// and prints the code and class our parser gives it (map_http_error; STS's own
// parse_error_response for xml) ("AWS.SimpleQueueService.NonExistentQueue permanent"), so
// tests/system/test_error_table.py can hold our classification against botocore's retry lists.
#include <fmt/format.h>

#include <iostream>
#include <string>

#include "aws/credentials/sts.hpp"
#include "aws/protocol/error_mapping.hpp"

namespace {

const char* class_name(ic::ErrorClass error_class) {
  switch (error_class) {
    case ic::ErrorClass::Retryable:
      return "retryable";
    case ic::ErrorClass::Throttling:
      return "throttling";
    case ic::ErrorClass::Permanent:
      return "permanent";
  }
  return "?";
}

}  // namespace

int main() {
  std::string protocol;
  long status = 0;
  std::string type;
  std::string query_error;
  while (std::cin >> protocol >> status >> type >> query_error) {
    if (protocol == "xml") {
      const auto error = ic::aws::sts::parse_error_response(
          status, fmt::format("<ErrorResponse><Error><Type>Sender</Type><Code>{}</Code>"
                              "<Message>m</Message></Error></ErrorResponse>",
                              type));
      std::cout << error.code << " " << class_name(error.error_class) << "\n";
      continue;
    }
    ic::http::HttpResponse response{
        .status = status, .body = fmt::format(R"({{"__type":"{}","message":"m"}})", type)};
    if (query_error != "-") response.headers.emplace_back("x-amzn-query-error", query_error);
    const auto error = ic::aws::map_http_error(response);
    std::cout << error.code << " " << class_name(error.error_class) << "\n";
  }
  return 0;
}
