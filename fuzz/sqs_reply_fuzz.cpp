// Every SQS reply the queue client decodes, through SqsClient over a scripted transport: the
// fuzz input is the HTTP replies. Each call answers with a value or a classified error, and a
// batch answer has exactly one result per entry, whatever the reply says.
#include <array>

#include "adapters/sqs/sqs_client.hpp"
#include "aws_client_support.hpp"
#include "event/run_blocking.hpp"

namespace {

using namespace std::chrono_literals;

constexpr std::string_view kQueue = "http://127.0.0.1:1/000000000000/charge-due";

template <class T>
void check(const std::expected<T, ic::Error>& result) {
  if (!result) ic::fuzz::ScriptedAwsClient::check(result.error());
}

}  // namespace

int fuzz_one(const std::uint8_t* data, std::size_t size) {
  const auto [choice, script] = ic::fuzz::select(data, size);
  ic::fuzz::ScriptedAwsClient aws("sqs", ic::sqs::kSqsTargetPrefix, script);
  ic::sqs::SqsClient sqs(aws.client);
  const std::array<ic::consumer::DeleteEntry, 3> deletes{
      {{"m0", "r0"}, {"m1", "r1"}, {"m2", "r2"}}};
  const std::array<ic::consumer::VisibilityEntry, 2> visibility{
      {{"m0", "r0", 5s}, {"m1", "r1", 0s}}};
  const std::array<ic::sqs::OutgoingMessage, 2> outgoing{{{.body = "a"}, {.body = "b"}}};
  switch (choice % 8) {
    case 0: {
      const auto messages = ic::event::run_blocking(sqs.receive(kQueue, 10, 1s));
      check(messages);
      if (messages) {
        for (const auto& message : *messages) {
          FUZZ_CHECK(!message.message_id.empty() && !message.receipt_handle.empty());
        }
      }
      break;
    }
    case 1: {
      const auto result = ic::event::run_blocking(sqs.delete_batch(kQueue, deletes));
      check(result);
      if (result) FUZZ_CHECK(result->size() == deletes.size());
      break;
    }
    case 2: {
      const auto result = ic::event::run_blocking(sqs.change_visibility_batch(kQueue, visibility));
      check(result);
      if (result) FUZZ_CHECK(result->size() == visibility.size());
      break;
    }
    case 3:
      check(ic::event::run_blocking(
          sqs.send(kQueue, {.body = "b", .attributes = {{"a", {"String", "v"}}}})));
      break;
    case 4: {
      const auto result = ic::event::run_blocking(sqs.send_batch(kQueue, outgoing));
      check(result);
      if (result) FUZZ_CHECK(result->size() == outgoing.size());
      break;
    }
    case 5:
      check(ic::event::run_blocking(sqs.get_queue_url("charge-due")));
      break;
    case 6:
      check(ic::event::run_blocking(sqs.create_queue("charge-due", {{"VisibilityTimeout", "60"}})));
      break;
    default:
      check(ic::event::run_blocking(sqs.get_queue_attributes(kQueue, {})));
      break;
  }
  return 0;
}
