// A bank for `make bench` that is not the bottleneck: the happy path of docs/design.md §5's
// core-banking and notification APIs in C++ over libmicrohttpd (epoll, keep-alive, a few
// threads), where tools/fake_bank (Python) spends a millisecond or more of its own CPU per
// request. No faults, no validation beyond the Idempotency-Key: it keys debits by that header,
// answers 201 the first time and 200 on a replay, and counts, so the bench can check no charge
// was debited twice. Not a test double for behaviour: tests use tools/fake_bank.
//
// Not cpp-httplib, as the admin server is: Debian's cpp-httplib (0.11) waits on an idle
// kept-alive connection by polling it every 10 ms with a 1 ms sleep between polls, so the
// consumer's 32 idle bank connections cost the bank thousands of wake-ups a second, on the
// cores the consumer and the emulators share (make bench's "CPU per message" table showed the
// bank at 0.29 ms per charge on ElasticMQ + dynalite and 1.8 ms on moto). Here an idle
// connection costs nothing until its next request.
//
//   ic_bench_fast_bank [--threads 2]   prints {"event":"listening","port":N} on stdout
//   GET /v1/ledger -> {"stats":{"debits":N,"replays":R,"notifications":M}}
#include <microhttpd.h>

#include <CLI/CLI.hpp>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <unordered_set>

#include "mhd_daemon.hpp"

namespace {

class Ledger {
 public:
  // Returns whether the key is new.
  bool debit(std::string_view key) {
    const std::scoped_lock lock(mutex_);
    const bool fresh = debits_.emplace(key).second;
    if (!fresh) ++replays_;
    return fresh;
  }
  void notify() {
    const std::scoped_lock lock(mutex_);
    ++notifications_;
  }
  nlohmann::json stats() const {
    const std::scoped_lock lock(mutex_);
    return {{"debits", debits_.size()}, {"replays", replays_}, {"notifications", notifications_}};
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<std::string> debits_;
  long replays_ = 0;
  long notifications_ = 0;
};

MHD_Result reply(MHD_Connection* connection, unsigned int status, const std::string& body) {
  MHD_Response* response = MHD_create_response_from_buffer(
      body.size(), const_cast<char*>(body.data()), MHD_RESPMEM_MUST_COPY);
  if (response == nullptr) return MHD_NO;
  MHD_add_response_header(response, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
  const MHD_Result queued = MHD_queue_response(connection, status, response);
  MHD_destroy_response(response);
  return queued;
}

std::string route(Ledger& ledger, MHD_Connection* connection, std::string_view method,
                  std::string_view url, unsigned int& status) {
  status = MHD_HTTP_OK;
  if (method == "POST" && url == "/v1/debits") {
    const char* key = MHD_lookup_connection_value(connection, MHD_HEADER_KIND, "Idempotency-Key");
    if (key == nullptr || *key == '\0') {
      status = MHD_HTTP_BAD_REQUEST;
      return R"({"code":"MALFORMED_REQUEST"})";
    }
    status = ledger.debit(key) ? MHD_HTTP_CREATED : MHD_HTTP_OK;
    return nlohmann::json{{"debitId", std::string("DBT-") + key}}.dump();
  }
  if (method == "POST" && url == "/v1/notifications") {
    ledger.notify();
    status = MHD_HTTP_ACCEPTED;
    return "{}";
  }
  if (method == "GET" && url == "/v1/ledger")
    return nlohmann::json{{"stats", ledger.stats()}}.dump();
  if (method == "GET" && url == "/health") return R"({"status":"ok"})";
  status = MHD_HTTP_NOT_FOUND;
  return R"({"code":"NOT_FOUND"})";
}

// libmicrohttpd calls this once with the headers, once per piece of the body, and once more
// at the end; only the last call answers. The bodies are not read: the happy path needs none.
MHD_Result answer(void* cls, MHD_Connection* connection, const char* url, const char* method,
                  const char* /*version*/, const char* /*upload_data*/,
                  std::size_t* upload_data_size, void** request_state) {
  static int headers_seen;  // any non-null marker: "this request's first call is done"
  if (*request_state == nullptr) {
    *request_state = &headers_seen;
    return MHD_YES;
  }
  if (*upload_data_size != 0) {
    *upload_data_size = 0;
    return MHD_YES;
  }
  unsigned int status = 0;
  const std::string body = route(*static_cast<Ledger*>(cls), connection, method, url, status);
  return reply(connection, status, body);
}

}  // namespace

int main(int argc, char** argv) {
  unsigned int threads = 2;
  CLI::App app{"Fast happy-path bank for the benchmark"};
  app.add_option("--threads", threads, "epoll threads")->check(CLI::Range(1U, 64U));
  CLI11_PARSE(app, argc, argv);

  Ledger ledger;
  const MHD_OptionItem options[] = {
      {MHD_OPTION_THREAD_POOL_SIZE, threads, nullptr},
      {MHD_OPTION_CONNECTION_LIMIT, 4096, nullptr},
      {MHD_OPTION_CONNECTION_TIMEOUT, 120, nullptr},
  };
  return ic::bench::serve_until_signalled({.flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_TURBO,
                                           .answer = &answer,
                                           .answer_cls = &ledger,
                                           .options = options});
}
