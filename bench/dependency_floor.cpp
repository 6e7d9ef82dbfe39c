// What the consumer's dependencies cost before any of its own code runs: the floor under its
// resident memory and CPU per charge, measured on the same machine as the consumer by
// `make bench` (bench/report.py), so a target below the floor is shown to be one, not argued.
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
//       --body-bytes 1000 --headers 6 --header-bytes 450
//     Each thread POSTs --requests times over one kept-alive libcurl handle set up as
//     CurlHttpTransport sets up its handles (blocking curl_easy_perform, TCP_NODELAY), with a
//     body and custom headers of the given sizes, and nothing else: no signing, no JSON.
//     Prints the process's CPU per exchange (getrusage, user + system):
//     {"exchanges":N,"exchangesPerSecond":R,"cpuUsPerExchange":C,"userUsPerExchange":U,
//      "contextSwitchesPerExchange":S}
#include <curl/curl.h>
#include <expat.h>
#include <fmt/format.h>
#include <httplib.h>
#include <openssl/evp.h>
#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <array>
#include <atomic>
#include <chrono>
#include <fstream>
#include <iostream>
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
};

std::size_t discard(char*, std::size_t size, std::size_t count, void*) {
  return size * count;
}

double seconds_of(const timeval& t) {
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
}

// One thread's exchanges; false when one failed (a floor measured over errors is no floor).
bool post_repeatedly(const ExchangeOptions& options, const std::string& body) {
  CURL* curl = curl_easy_init();
  if (curl == nullptr) return false;
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, discard);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, discard);
  curl_slist* headers = curl_slist_append(nullptr, "Content-Type: application/json");
  headers = curl_slist_append(headers, "Expect:");
  const std::size_t value_bytes =
      options.header_bytes / static_cast<std::size_t>(std::max(1, options.headers));
  for (int i = 1; i < options.headers; ++i) {
    headers = curl_slist_append(
        headers, fmt::format("x-floor-{}: {}", i, std::string(value_bytes, 'v')).c_str());
  }
  bool ok = headers != nullptr;
  for (long i = 0; ok && i < options.requests; ++i) {
    // Per transfer, as CurlHttpTransport::send sets them.
    curl_easy_setopt(curl, CURLOPT_URL, options.url.c_str());
    curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, 5000L);
    curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers);
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(body.size()));
    long status = 0;
    ok = curl_easy_perform(curl) == CURLE_OK &&
         curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &status) == CURLE_OK && status < 300;
  }
  curl_slist_free_all(headers);
  curl_easy_cleanup(curl);
  return ok;
}

int exchange_floor(const ExchangeOptions& options) {
  if (curl_global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) return 2;
  const std::string body = "{\"floor\":\"" +
                           std::string(options.body_bytes > 12 ? options.body_bytes - 12 : 0, 'b') +
                           "\"}";
  std::atomic<int> failed{0};
  const auto started = std::chrono::steady_clock::now();
  {
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
                             options.threads);
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
  CLI::App app{"The memory and CPU floor of the consumer's dependencies (bench/report.py)"};
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
  CLI11_PARSE(app, argc, argv);
  if (memory->parsed()) return memory_floor();
  return exchange_floor(options);
}
