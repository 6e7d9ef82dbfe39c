#include "http/curl_transport.hpp"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cctype>
#include <string>
#include <unordered_map>

namespace ic::http {
namespace {

// A reply larger than this is cut off and reported as an interrupted transfer.
constexpr std::size_t kMaxResponseBytes = 64 * 1024 * 1024;

std::atomic<std::uint64_t> next_transport_id{1};

void init_curl_once() {
  static const CURLcode result = curl_global_init(CURL_GLOBAL_DEFAULT);
  if (result != CURLE_OK) throw std::runtime_error("curl_global_init failed");
}

// What one transfer collects through the callbacks.
struct Exchange {
  HttpResponse response;
  bool too_large = false;
};

std::size_t on_body(char* data, std::size_t size, std::size_t count, void* user) {
  auto& exchange = *static_cast<Exchange*>(user);
  const std::size_t bytes = size * count;
  if (exchange.response.body.size() + bytes > kMaxResponseBytes) {
    exchange.too_large = true;
    return 0;
  }
  exchange.response.body.append(data, bytes);
  return bytes;
}

std::string_view trim(std::string_view text) {
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.front())))
    text.remove_prefix(1);
  while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back())))
    text.remove_suffix(1);
  return text;
}

std::size_t on_header(char* data, std::size_t size, std::size_t count, void* user) {
  auto& headers = static_cast<Exchange*>(user)->response.headers;
  const std::size_t bytes = size * count;
  const std::string_view line(data, bytes);
  // A new status line (e.g. after "100 Continue") starts a new header block.
  if (line.starts_with("HTTP/")) {
    headers.clear();
    return bytes;
  }
  const auto colon = line.find(':');
  if (colon == std::string_view::npos) return bytes;
  std::string name(trim(line.substr(0, colon)));
  std::transform(name.begin(), name.end(), name.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  headers.emplace_back(std::move(name), std::string(trim(line.substr(colon + 1))));
  return bytes;
}

struct HeaderList {
  curl_slist* list = nullptr;
  ~HeaderList() { curl_slist_free_all(list); }
  void add(const char* line) {
    if (auto* grown = curl_slist_append(list, line)) list = grown;
  }
  void add(std::string_view name, std::string_view value) {
    line_.assign(name).append(": ").append(value);
    add(line_.c_str());
  }

 private:
  std::string line_;  // curl copies each line, so one buffer serves them all
};

bool has_header(const HttpRequest& request, std::string_view lower_name) {
  return std::any_of(request.headers.begin(), request.headers.end(), [&](const auto& header) {
    return header.first.size() == lower_name.size() &&
           std::equal(
               header.first.begin(), header.first.end(), lower_name.begin(),
               [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
  });
}

// Whether the whole request reached the socket: only then can the server have acted on it.
bool request_sent(CURL* curl, const HttpRequest& request) {
  curl_off_t uploaded = 0;
  long header_bytes = 0;
  curl_easy_getinfo(curl, CURLINFO_SIZE_UPLOAD_T, &uploaded);
  curl_easy_getinfo(curl, CURLINFO_REQUEST_SIZE, &header_bytes);
  return header_bytes > 0 && uploaded >= static_cast<curl_off_t>(request.body.size());
}

// Certificate trouble in the handshake (see TransportError::tls_refused). A peer that refuses
// our certificate says so with a TLS alert; under TLS 1.3 the alert arrives after our side
// finished the handshake, so it surfaces as a receive or send error -- still before the peer
// processed anything. curl reports no alert code, only OpenSSL's text naming it.
bool tls_refused(CURLcode code, std::string_view detail) {
  switch (code) {
    case CURLE_SSL_CERTPROBLEM:
    case CURLE_SSL_CACERT_BADFILE:
    case CURLE_SSL_CRL_BADFILE:
    case CURLE_SSL_ISSUER_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
      return true;
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_RECV_ERROR:
    case CURLE_SEND_ERROR:
      return detail.find(" alert ") != std::string_view::npos;
    default:
      return false;
  }
}

TransportError classify(CURLcode code, bool sent, const char* detail) {
  if (tls_refused(code, detail)) {
    return TransportError{.failure = TransportFailure::CouldNotConnect,
                          .detail = fmt::format("{} ({})", curl_easy_strerror(code), detail),
                          .tls_refused = true};
  }
  TransportFailure failure = TransportFailure::CouldNotConnect;
  switch (code) {
    case CURLE_OPERATION_TIMEDOUT:
      failure = sent ? TransportFailure::TimeoutAfterSend : TransportFailure::TimeoutBeforeSend;
      break;
    case CURLE_COULDNT_RESOLVE_HOST:
    case CURLE_COULDNT_RESOLVE_PROXY:
    case CURLE_COULDNT_CONNECT:
    case CURLE_SSL_CONNECT_ERROR:
    case CURLE_PEER_FAILED_VERIFICATION:
      failure = TransportFailure::CouldNotConnect;
      break;
    default:
      // Send/receive errors, an empty reply, a cut-off body: ambiguous once the request left.
      failure = sent ? TransportFailure::Interrupted : TransportFailure::CouldNotConnect;
      break;
  }
  return TransportError{.failure = failure,
                        .detail = fmt::format("{} ({})", curl_easy_strerror(code), detail)};
}

// curl_easy_perform, on a multi handle that a stop request wakes at once (a long poll would
// otherwise hold shutdown for its whole wait). The connection stays in `multi`'s cache.
CURLcode perform_cancellable(CURL* curl, CURLM*& multi, const std::stop_token& cancel) {
  if (multi == nullptr) multi = curl_multi_init();
  if (multi == nullptr) return CURLE_OUT_OF_MEMORY;
  if (curl_multi_add_handle(multi, curl) != CURLM_OK) return CURLE_FAILED_INIT;
  CURLcode result = CURLE_ABORTED_BY_CALLBACK;
  {
    // Safe from any thread: curl_multi_wakeup is the one multi call that is.
    const std::stop_callback wake(cancel, [multi] { curl_multi_wakeup(multi); });
    while (true) {
      int running = 0;
      if (curl_multi_perform(multi, &running) != CURLM_OK) {
        result = CURLE_FAILED_INIT;
        break;
      }
      if (running == 0) {
        int left = 0;
        if (const CURLMsg* done = curl_multi_info_read(multi, &left);
            done != nullptr && done->msg == CURLMSG_DONE) {
          result = done->data.result;
        }
        break;
      }
      if (cancel.stop_requested()) break;
      // A wake-up that came before this call still ends it at once.
      curl_multi_poll(multi, nullptr, 0, 1000, nullptr);
    }
  }
  curl_multi_remove_handle(multi, curl);
  return result;
}

// The options every transfer of a handle shares, set once: curl_easy_reset and setting them
// again per transfer (it re-copies libcurl's defaults, e.g. the CA path) cost more than the
// JSON of a request. send() sets everything that differs between requests.
void set_handle_options(CURL* curl, char* error_buffer, const TlsClientFiles& tls) {
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPINTVL, 15L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  if (!tls.cert_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLCERT, tls.cert_file.c_str());
  if (!tls.key_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLKEY, tls.key_file.c_str());
  if (!tls.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, tls.ca_file.c_str());
}

}  // namespace

struct CurlHttpTransport::Handle {
  CURL* curl = nullptr;
  CURLM* multi = nullptr;  // only for cancellable transfers: curl_multi_wakeup interrupts it
  char error_buffer[CURL_ERROR_SIZE] = {};
  Handle() : curl(curl_easy_init()) {
    if (curl == nullptr) throw std::runtime_error("curl_easy_init failed");
  }
  ~Handle() {
    curl_easy_cleanup(curl);
    if (multi != nullptr) curl_multi_cleanup(multi);
  }
  Handle(const Handle&) = delete;
  Handle& operator=(const Handle&) = delete;
};

CurlHttpTransport::CurlHttpTransport(TlsClientFiles tls)
    : id_(next_transport_id.fetch_add(1)), tls_(std::move(tls)) {
  init_curl_once();
}

CurlHttpTransport::~CurlHttpTransport() = default;

CurlHttpTransport::Handle& CurlHttpTransport::handle_for_this_thread() {
  // Stale entries of destroyed transports stay behind as a few bytes; their ids never return.
  thread_local std::unordered_map<std::uint64_t, Handle*> cache;
  if (auto it = cache.find(id_); it != cache.end()) return *it->second;
  auto handle = std::make_unique<Handle>();
  set_handle_options(handle->curl, handle->error_buffer, tls_);
  Handle* raw = handle.get();
  {
    MutexLock lock(mutex_);
    handles_.push_back(std::move(handle));
  }
  cache.emplace(id_, raw);
  return *raw;
}

std::expected<HttpResponse, TransportError> CurlHttpTransport::send(const HttpRequest& request,
                                                                    const HttpTimeouts& timeouts) {
  Handle& handle = handle_for_this_thread();
  CURL* curl = handle.curl;
  Exchange exchange;
  handle.error_buffer[0] = '\0';
  HeaderList headers;
  for (const auto& [name, value] : request.headers) headers.add(name, value);
  headers.add("Expect:");  // no 100-continue round trip for larger bodies
  // curl would label a body without a content type as a form; send what the caller said.
  if (!has_header(request, "content-type")) headers.add("Content-Type:");

  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeouts.connect.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeouts.total.count()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.list);
  curl_easy_setopt(curl, CURLOPT_WRITEDATA, &exchange);
  curl_easy_setopt(curl, CURLOPT_HEADERDATA, &exchange);
  // The previous request's method stays set on the handle: each branch sets all of it.
  if (request.method == "GET") {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST, nullptr);
    curl_easy_setopt(curl, CURLOPT_HTTPGET, 1L);
  } else {
    curl_easy_setopt(curl, CURLOPT_CUSTOMREQUEST,
                     request.method == "POST" ? nullptr : request.method.c_str());
    curl_easy_setopt(curl, CURLOPT_POST, 1L);
    curl_easy_setopt(curl, CURLOPT_POSTFIELDS, request.body.data());
    curl_easy_setopt(curl, CURLOPT_POSTFIELDSIZE_LARGE,
                     static_cast<curl_off_t>(request.body.size()));
  }

  const CURLcode code = request.cancel.stop_possible()
                            ? perform_cancellable(curl, handle.multi, request.cancel)
                            : curl_easy_perform(curl);
  if (code != CURLE_OK) {
    const bool sent = request_sent(curl, request);
    return std::unexpected(
        classify(code, sent, exchange.too_large ? "reply too large" : handle.error_buffer));
  }
  curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &exchange.response.status);
  return std::move(exchange.response);
}

}  // namespace ic::http
