// The bench's AWS: the SQS and DynamoDB calls that `make bench` drives, in memory, in one C++
// process over libmicrohttpd, so that the consumer can be measured faster than the emulators
// let it. On the 2-core bench machine ElasticMQ + dynalite spend ≈2 ms of CPU per message
// (docs/performance.md, "CPU per message of every process") and cap the whole stack at ≈600
// charges/s, below the 1,150 charges/s the consumer must show. This process spends a small
// fraction of that, on the same cores.
//
// It is the bench's backend, not a test double of AWS: conformance stays with the emulators
// and botocore in the tests. What it implements (sqs.hpp, dynamodb.hpp), it implements with
// AWS's semantics, because the bench's exactly-once check is only worth something if claims,
// fences, visibility timeouts and receipt handles behave as on AWS. Anything else is answered
// with AWS's JSON error (UnknownOperationException, ValidationException, ...), never a crash.
// Left out on purpose: signature checks, redrive to a dead-letter queue after maxReceiveCount
// (the policy is stored and reported, not applied), message retention, FIFO queues, TTL
// deletion (TTL is recorded; AWS itself deletes within days), MD5OfMessageAttributes,
// reserved-word checks, nested document paths, range keys.
//
// The files: server and request (HTTP and routing); reply, request_members, json_text and
// common (what both services share); sqs* with sqs_queue, receipt_handle and md5 (SQS);
// dynamodb* with table, item and item_update (DynamoDB); expression* and bindings (DynamoDB's
// expressions).
//
//   ic_bench_fast_aws [--threads 2]   prints {"event":"listening","port":N} on stdout
#include <CLI/CLI.hpp>
#include <cstdint>
#include <thread>

#include "fast_aws/server.hpp"
#include "mhd_daemon.hpp"

int main(int argc, char** argv) {
  unsigned int threads = 2;
  CLI::App app{"SQS and DynamoDB in memory, for the benchmark"};
  app.add_option("--threads", threads, "epoll threads")->check(CLI::Range(1U, 64U));
  CLI11_PARSE(app, argc, argv);

  ic::bench::fast_aws::Server server;
  std::thread timers;
  const MHD_OptionItem options[] = {
      {MHD_OPTION_THREAD_POOL_SIZE, threads, nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, 8192, nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, 300, nullptr},
      // An option array carries a callback as an intptr_t (microhttpd.h, MHD_OPTION_ARRAY).
      {MHD_OPTION_NOTIFY_COMPLETED,
       reinterpret_cast<std::intptr_t>(&ic::bench::fast_aws::completed), nullptr},
      {MHD_OPTION_LISTEN_BACKLOG_SIZE, 1024, nullptr},
  };
  return ic::bench::serve_until_signalled({
      .flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_TURBO | MHD_ALLOW_SUSPEND_RESUME,
      .answer = &ic::bench::fast_aws::answer,
      .answer_cls = &server,
      .options = options,
      .on_bound =
          [&](std::uint16_t port) {
            server.sqs().set_port(port);  // queue URLs name it; set before anyone can know it
            timers = std::thread([&server] { server.sqs().run_timers(); });
          },
      .on_stop =
          [&] {
            server.sqs().stop();
            timers.join();
          },
  });
}
