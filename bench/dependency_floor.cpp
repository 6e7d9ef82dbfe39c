// What the consumer's dependencies cost before any of its own code runs: the floor under its
// resident memory and CPU per charge, measured on the same machine as the consumer by
// `make bench` (bench/runs/floor.py), so a target below the floor is shown to be one, not argued.
// A measurement tool, not a test.
//
//   ic_bench_dependency_floor memory
//     Links the shared libraries charge-recovery links (libcurl and its closure, libcrypto,
//     libexpat, libfmt, cpp-httplib, libstdc++) and initialises each as the consumer's start-up
//     does -- curl_global_init, a SHA-256 fetched through OpenSSL's provider, an expat parser,
//     an httplib::Server -- then prints its resident memory, one thread, no consumer code:
//     {"rssKiB":N,"anonymousKiB":N,"fileKiB":N}
//
//   ic_bench_dependency_floor exchanges --url URL --threads 32 --requests 2000
//       --body-bytes 1000 --headers 6 --header-bytes 450 [--event-loop]
//     Each of --threads kept-alive libcurl handles POSTs --requests times, set up as the
//     consumer's transport sets up its handles (TCP_NODELAY, 2 KiB receive buffer), with a body
//     and custom headers of the given sizes, and nothing else: no signing, no JSON. Without
//     --event-loop each handle has a thread of its own (blocking curl_easy_perform, the
//     threaded consumer's transport); with it one thread drives them all on a multi handle
//     through epoll and curl_multi_socket_action, as the event-driven consumer's CurlTransport
//     does, --threads being the transfers in flight.
//     Prints the process's CPU per exchange (getrusage, user + system):
//     {"exchanges":N,"exchangesPerSecond":R,"cpuUsPerExchange":C,"userUsPerExchange":U,
//      "contextSwitchesPerExchange":S}
#include <curl/curl.h>
#include <expat.h>
#include <fmt/format.h>
#include <httplib.h>
#include <openssl/evp.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace {

// VmRSS, RssAnon and RssFile of /proc/self/status, in KiB.
nlohmann::json resident_memory() {
  nlohmann::json out;
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    for (const auto& [field, key] :
         {std::pair{"VmRSS:", "rssKiB"}, std::pair{"RssAnon:", "anonymousKiB"},
          std::pair{"RssFile:", "fileKiB"}}) {
      if (line.starts_with(field))
        out[key] = std::stol(line.substr(std::string_view(field).size()));
    }
  }
  return out;
}

int memory_floor() {
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 2;
  EVP_MD* md = EVP_MD_fetch(nullptr, "SHA256", nullptr);
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
  const bool hashed = md != nullptr && ctx != nullptr &&
                      EVP_DigestInit_ex2(ctx, md, nullptr) == 1 &&
                      EVP_DigestUpdate(ctx, "floor", 5) == 1 &&
                      EVP_DigestFinal_ex(ctx, digest.data(), nullptr) == 1;
  EVP_MD_CTX_free(ctx);
  if (!hashed) return 2;
  XML_Parser parser = XML_ParserCreate(nullptr);
  if (parser == nullptr) return 2;
  XML_ParserFree(parser);
  const httplib::Server server;  // constructed, as the admin server's is; never listens
  std::cout << resident_memory().dump() << std::endl;
  EVP_MD_free(md);
  return 0;
}

struct ExchangeOptions {
  std::string url;
  int threads = 32;
  long requests = 2000;
  std::size_t body_bytes = 1000;
  int headers = 6;
  std::size_t header_bytes = 450;
  bool event_loop = false;
};

std::size_t discard(char*, std::size_t size, std::size_t count, void*) {
  return size * count;
}

double seconds_of(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

// A handle set up once, as the consumer's transport sets up its own, with the request's
// headers; owns both.
class FloorHandle {
 public:
  FloorHandle(const ExchangeOptions& options, const std::string& body)
      : curl_(curl_easy_init()), options_(options), body_(body) {
    headers_ = curl_slist_append(nullptr, "Content-Type: application/json");
    headers_ = curl_slist_append(headers_, "Expect:");
    const std::size_t value_bytes =
        options.header_bytes / static_cast<std::size_t>(std::max(1, options.headers));
    for (int i = 1; i < options.headers; ++i) {
      headers_ = curl_slist_append(
          headers_, fmt::format("x-floor-{}: {}", i, std::string(value_bytes, 'v')).c_str());
    }
    if (curl_ == nullptr) return;
    curl_easy_setopt(curl_, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(curl_, CURLOPT_TCP_NODELAY, 1L);
    curl_easy_setopt(curl_, CURLOPT_TCP_KEEPALIVE, 1L);
    curl_easy_setopt(curl_, CURLOPT_BUFFERSIZE, 2048L);
    curl_easy_setopt(curl_, CURLOPT_WRITEFUNCTION, discard);
    curl_easy_setopt(curl_, CURLOPT_HEADERFUNCTION, discard);
    curl_easy_setopt(curl_, CURLOPT_PRIVATE, this);
  }
  ~FloorHandle() {
    curl_slist_free_all(headers_);
    curl_easy_cleanup(curl_);
  }
  FloorHandle(const FloorHandle&) = delete;
  FloorHandle& operator=(const FloorHandle&) = delete;
  // Per transfer, as the consumer's transport sets them.
  [[nodiscard]] CURL* prepared() const {
    curl_easy_setopt(curl_, CURLOPT_URL, options_.url.c_str());
    curl_easy_setopt(curl_, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(curl_, CURLOPT_HTTPHEADER, headers_);
    curl_easy_setopt(curl_, CURLOPT_POST, 1L);
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDS, body_.data());
    curl_easy_setopt(curl_, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body_.size()));
    return curl_;
  }
  [[nodiscard]] CURL* curl() const { return curl_; }
  [[nodiscard]] bool ready() const { return curl_ != nullptr && headers_ != nullptr; }
  [[nodiscard]] bool answered() const {
    long status = 0;
    return curl_easy_getinfo(curl_, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK && status < 300;
  }

 private:
  CURL* curl_;
  const ExchangeOptions& options_;
  const std::string& body_;
  curl_slist* headers_ = nullptr;
};

// One thread's exchanges; false when one failed (a floor measured over errors is no floor).
bool post_repeatedly(const ExchangeOptions& options, const std::string& body) {
  FloorHandle handle(options, body);
  bool ok = handle.ready();
  for (long i = 0; ok && i < options.requests; ++i) {
    ok = curl_easy_perform(handle.prepared()) == CURLE_OK && handle.answered();
  }
  return ok;
}

// libcurl's multi_socket API on one epoll thread: what the event-driven transport does per
// exchange, without the coroutines. Its callbacks keep the epoll set and the one timeout.
struct MultiLoop {
  int epoll_fd = epoll_create1(EPOLL_CLOEXEC);
  long timeout_ms = -1;
  static int on_socket(CURL*, curl_socket_t fd, int what, void* self, void*) {
    auto& loop = *static_cast<MultiLoop*>(self);
    if (what == CURL_POLL_REMOVE) {
      epoll_ctl(loop.epoll_fd, EPOLL_CTL_DEL, fd, nullptr);
      return 0;
    }
    epoll_event event{};
    event.events = (what == CURL_POLL_OUT ? 0U : EPOLLIN) | (what == CURL_POLL_IN ? 0U : EPOLLOUT);
    event.data.fd = fd;
    if (epoll_ctl(loop.epoll_fd, EPOLL_CTL_MOD, fd, &event) != 0) {
      epoll_ctl(loop.epoll_fd, EPOLL_CTL_ADD, fd, &event);
    }
    return 0;
  }
  static int on_timer(CURLM*, long ms, void* self) {
    static_cast<MultiLoop*>(self)->timeout_ms = ms;
    return 0;
  }
};

// `in_flight` transfers at a time on one thread, each handle re-added when its transfer ends.
bool post_on_one_loop(const ExchangeOptions& options, const std::string& body) {
  MultiLoop loop;
  CURLM* multi = curl_multi_init();
  curl_multi_setopt(multi, CURLMOPT_SOCKETFUNCTION, MultiLoop::on_socket);
  curl_multi_setopt(multi, CURLMOPT_SOCKETDATA, &loop);
  curl_multi_setopt(multi, CURLMOPT_TIMERFUNCTION, MultiLoop::on_timer);
  curl_multi_setopt(multi, CURLMOPT_TIMERDATA, &loop);
  curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, 4096L);
  std::vector<std::unique_ptr<FloorHandle>> handles;
  bool ok = loop.epoll_fd >= 0;
  for (int i = 0; ok && i < options.threads; ++i) {
    handles.push_back(std::make_unique<FloorHandle>(options, body));
    ok = handles.back()->ready() &&
         curl_multi_add_handle(multi, handles.back()->prepared()) == CURLM_OK;
  }
  const long wanted = static_cast<long>(options.threads) * options.requests;
  long started = options.threads;
  long finished = 0;
  std::array<epoll_event, 256> events{};
  while (ok && finished < wanted) {
    const int ready = epoll_wait(loop.epoll_fd, events.data(), static_cast<int>(events.size()),
                                 static_cast<int>(loop.timeout_ms < 0 ? 1000 : loop.timeout_ms));
    int running = 0;
    if (ready <= 0) curl_multi_socket_action(multi, CURL_SOCKET_TIMEOUT, 0, &running);
    for (int i = 0; i < ready; ++i) {
      const auto& event = events[static_cast<std::size_t>(i)];
      const int mask = ((event.events & EPOLLIN) != 0U ? CURL_CSELECT_IN : 0) |
                       ((event.events & EPOLLOUT) != 0U ? CURL_CSELECT_OUT : 0) |
                       ((event.events & (EPOLLERR | EPOLLHUP)) != 0U ? CURL_CSELECT_ERR : 0);
      curl_multi_socket_action(multi, event.data.fd, mask, &running);
    }
    int left = 0;
    while (const CURLMsg* message = curl_multi_info_read(multi, &left)) {
      if (message->msg != CURLMSG_DONE) continue;
      void* data = nullptr;
      curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &data);
      const auto& handle = *static_cast<FloorHandle*>(data);
      ok = message->data.result == CURLE_OK && handle.answered();
      curl_multi_remove_handle(multi, handle.curl());
      ++finished;
      if (ok && started < wanted) {
        ++started;
        ok = curl_multi_add_handle(multi, handle.prepared()) == CURLM_OK;
      }
    }
  }
  for (const auto& handle : handles) curl_multi_remove_handle(multi, handle->curl());
  handles.clear();
  curl_multi_cleanup(multi);
  close(loop.epoll_fd);
  return ok;
}

int exchange_floor(const ExchangeOptions& options) {
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 2;
  const std::string body = "{\"floor\":\"" +
                           std::string(options.body_bytes > 12 ? options.body_bytes - 12 : 0, 'b') +
                           "\"}";
  std::atomic<int> failed{0};
  const auto started = std::chrono::steady_clock::now();
  if (options.event_loop) {
    if (!post_on_one_loop(options, body)) failed.fetch_add(1);
  } else {
    std::vector<std::jthread> threads;
    for (int t = 0; t < options.threads; ++t) {
      threads.emplace_back([&] {
        if (!post_repeatedly(options, body)) failed.fetch_add(1);
      });
    }
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (failed.load() != 0) {
    std::cerr << fmt::format("{} of {} threads saw a failed exchange\n", failed.load(),
                             options.event_loop ? 1 : options.threads);
    return 1;
  }
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  const double exchanges =
      static_cast<double>(options.threads) * static_cast<double>(options.requests);
  const double user = seconds_of(usage.ru_utime);
  const double cpu = user + seconds_of(usage.ru_stime);
  std::cout << nlohmann::json{{"exchanges", exchanges},
                              {"exchangesPerSecond", exchanges / seconds},
                              {"cpuUsPerExchange", 1e6 * cpu / exchanges},
                              {"userUsPerExchange", 1e6 * user / exchanges},
                              {"contextSwitchesPerExchange",
                               static_cast<double>(usage.ru_nvcsw + usage.ru_nivcsw) / exchanges}}
                   .dump()
            << std::endl;
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"The memory and CPU floor of the consumer's dependencies (bench/runs/floor.py)"};
  app.require_subcommand(1);
  auto* memory = app.add_subcommand("memory", "resident memory with the libraries initialised");
  ExchangeOptions options;
  auto* exchanges = app.add_subcommand("exchanges", "CPU per bare libcurl exchange");
  exchanges->add_option("--url", options.url, "an HTTP endpoint answering POST")->required();
  exchanges->add_option("--threads", options.threads)->check(CLI::Range(1, 1024));
  exchanges->add_option("--requests", options.requests, "per thread")
      ->check(CLI::Range(1L, 10'000'000L));
  exchanges->add_option("--body-bytes", options.body_bytes)
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 20));
  exchanges->add_option("--headers", options.headers, "custom headers")->check(CLI::Range(1, 64));
  exchanges->add_option("--header-bytes", options.header_bytes, "their values' bytes in all")
      ->check(CLI::Range(std::size_t{0}, std::size_t{1} << 16));
  exchanges->add_flag("--event-loop", options.event_loop,
                      "one thread, --threads transfers in flight on a multi handle");
  CLI11_PARSE(app, argc, argv);
  if (memory->parsed()) return memory_floor();
  return exchange_floor(options);
}
