#include "http/curl_transport.hpp"

#include <curl/curl.h>
#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "event/event_loop.hpp"
#include "event/run_blocking.hpp"

namespace ic::http {
namespace {

// Idle connections a loop's multi handle keeps for reuse: the peak's in-flight transfers (one
// per charge in flight to each service, WORKERS at most 1,024) with room to spare.
constexpr long kMaxIdleConnections = 4096;

constexpr long kReceiveBufferBytes = 2048;

// Over TLS, libcurl 7.88 copies each request into an upload buffer of this size, allocated at the
// send and freed at the end of the transfer: its default, 64 KiB per HTTPS transfer in flight,
// is 64 MiB of heap at 1,024 (mostly untouched pages, so less of it resident). 16 KiB is its
// minimum; a larger request goes out in pieces of that size.
constexpr long kUploadBufferBytes = 16 * 1024;

// How long a loop's multi handle keeps a parsed CA store before reading the file again: the
// most a replaced CA bundle waits to apply to new connections.
constexpr long kCaStoreSeconds = 60;

// Room made for a reply's headers at once (AWS and the bank send 5 to 10), rather than growing
// the vector a header at a time.
constexpr std::size_t kExpectedReplyHeaders = 12;

// A reply larger than this is cut off and reported as an interrupted transfer.
constexpr std::size_t kMaxResponseBytes = 64 * 1024 * 1024;

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

// The request's header lines as the list CURLOPT_HTTPHEADER reads, built in three allocations
// rather than curl_slist_append's two per line: the lines in one buffer, their offsets and the
// nodes in one vector each. libcurl only reads the list, and it lives in the transfer's frame
// until the transfer ends.
class HeaderList {
 public:
  // Room for `lines` more lines of `bytes` in all (separators and terminators included).
  void reserve(std::size_t lines, std::size_t bytes) {
    offsets_.reserve(offsets_.size() + lines);
    text_.reserve(text_.size() + bytes);
  }
  void add(std::string_view name, std::string_view value) {
    offsets_.push_back(text_.size());
    text_.append(name).append(": ").append(value).push_back('\0');
  }
  // A line as is ("Expect:" turns a header libcurl would add off).
  void add(std::string_view line) {
    offsets_.push_back(text_.size());
    text_.append(line).push_back('\0');
  }
  // The list; valid until the next add().
  [[nodiscard]] curl_slist* list() {
    nodes_.resize(offsets_.size());
    for (std::size_t i = 0; i < nodes_.size(); ++i) {
      nodes_[i].data = text_.data() + offsets_[i];
      nodes_[i].next = i + 1 < nodes_.size() ? &nodes_[i + 1] : nullptr;
    }
    return nodes_.empty() ? nullptr : nodes_.data();
  }

 private:
  std::string text_;
  std::vector<std::size_t> offsets_;
  std::vector<curl_slist> nodes_;
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

// The options every transfer of a handle shares, set once: curl_easy_reset and setting them
// again per transfer (it re-copies libcurl's defaults, e.g. the CA path) cost more than the
// JSON of a request. send() sets everything that differs between requests.
void set_handle_options(CURL* curl, char* error_buffer, const TlsClientFiles& tls) {
  curl_easy_setopt(curl, CURLOPT_NOSIGNAL, 1L);
  // Debian's libcurl resolves on a thread per lookup (AsynchDNS without c-ares). A transfer
  // that ends mid-lookup (its connect timeout, a stop) would join that thread on the loop and
  // hold every other transfer for the rest of the lookup; this leaves the thread to finish on
  // its own instead (libcurl >= 7.87; tests/unit/dns).
  curl_easy_setopt(curl, CURLOPT_QUICK_EXIT, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_NODELAY, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPALIVE, 1L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPIDLE, 30L);
  curl_easy_setopt(curl, CURLOPT_TCP_KEEPINTVL, 15L);
  curl_easy_setopt(curl, CURLOPT_ERRORBUFFER, error_buffer);
  // The receive buffer of each handle, one handle per transfer in flight: libcurl's 16 KiB made
  // about a fifth of the memory at 1,024 charges in flight. A DynamoDB or bank reply fits in
  // 2 KiB; a larger one (a ReceiveMessage of ten big bodies) takes a few more reads.
  curl_easy_setopt(curl, CURLOPT_BUFFERSIZE, kReceiveBufferBytes);
  curl_easy_setopt(curl, CURLOPT_UPLOAD_BUFFERSIZE, kUploadBufferBytes);
  curl_easy_setopt(curl, CURLOPT_WRITEFUNCTION, on_body);
  curl_easy_setopt(curl, CURLOPT_HEADERFUNCTION, on_header);
  if (!tls.cert_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLCERT, tls.cert_file.c_str());
  if (!tls.key_file.empty()) curl_easy_setopt(curl, CURLOPT_SSLKEY, tls.key_file.c_str());
  if (!tls.ca_file.empty()) curl_easy_setopt(curl, CURLOPT_CAINFO, tls.ca_file.c_str());
  // Trust one bundle: `tls.ca_file`, else the system's (Debian's libcurl names both the bundle
  // and /etc/ssl/certs, the same certificates). A CA directory keeps libcurl from caching the
  // store: every new TLS connection parsed the whole bundle (~140 certificates) again and held
  // its own copy for its life. Without one, the multi handle keeps one parsed store that its
  // connections share, and reads the file again after kCaStoreSeconds.
  curl_easy_setopt(curl, CURLOPT_CAPATH, nullptr);
  curl_easy_setopt(curl, CURLOPT_CA_CACHE_TIMEOUT, kCaStoreSeconds);
}

// One easy handle of the pool: its options (set_handle_options) stay from transfer to transfer.
struct PooledHandle {
  CURL* curl = nullptr;
  char error_buffer[CURL_ERROR_SIZE] = {};
  explicit PooledHandle(const TlsClientFiles& tls) : curl(curl_easy_init()) {
    if (curl == nullptr) throw std::runtime_error("curl_easy_init failed");
    set_handle_options(curl, error_buffer, tls);
  }
  ~PooledHandle() { curl_easy_cleanup(curl); }
  PooledHandle(const PooledHandle&) = delete;
  PooledHandle& operator=(const PooledHandle&) = delete;
};

// One transfer in flight, living in its send() frame.
struct Transfer {
  std::uint64_t id = 0;
  PooledHandle* handle = nullptr;
  Exchange exchange;
  CURLcode result = CURLE_OK;
  bool finished = false;
  Resumable waiter;
};

// The loop's side of the transport: one libcurl multi handle whose sockets the loop's epoll
// watches and whose timeout is one loop timer (libcurl's "multi_socket" API). Loop thread only.
//
// The sockets of its connections (opened and closed through its callbacks, so their whole life
// is known) stay in the epoll set from their first use to their closing, watched for input
// while pooled: libcurl asks for input and then for nothing on every transfer, and following it
// cost an epoll_ctl to add and one to remove per request. A pooled socket that turns readable
// was almost always closed by its server (an HTTP/1.1 server sends nothing unasked; over TLS it
// may be a late session ticket). It leaves the set at that first report, so a level-triggered
// readiness nobody reads cannot make the loop spin, and libcurl's own check before reusing the
// connection decides whether it is dead. Other sockets libcurl hands over (a resolver's wake-up
// pair) are watched exactly while it asks.
class CurlMulti final : public event::Attachment, public event::FdHandler {
 public:
  CurlMulti(event::EventLoop& loop, TlsClientFiles tls)
      : loop_(loop), tls_(std::move(tls)), multi_(curl_multi_init()), share_(curl_share_init()) {
    if (multi_ == nullptr || share_ == nullptr) {
      curl_share_cleanup(share_);
      curl_multi_cleanup(multi_);
      throw std::runtime_error("curl_multi_init failed");
    }
    // The easy handles of a multi keep TLS sessions apart unless they share them: without this a
    // connection opened by another handle than the one that first met the server does a full
    // handshake. One thread uses the share, so it needs no lock callbacks.
    curl_share_setopt(share_, CURLSHOPT_SHARE, CURL_LOCK_DATA_SSL_SESSION);
    curl_multi_setopt(multi_, CURLMOPT_SOCKETFUNCTION, on_socket);
    curl_multi_setopt(multi_, CURLMOPT_SOCKETDATA, this);
    curl_multi_setopt(multi_, CURLMOPT_TIMERFUNCTION, on_timer);
    curl_multi_setopt(multi_, CURLMOPT_TIMERDATA, this);
    // libcurl's default keeps 4 idle connections per transfer *in flight when one ends*: with
    // transfers finishing in bursts that closed a fifth of the connections (a connect and a
    // close per 5 charges, measured). Keep as many as the peak needs; the kernel's keep-alive
    // (30 s) and the servers' idle timeouts prune them.
    curl_multi_setopt(multi_, CURLMOPT_MAXCONNECTS, kMaxIdleConnections);
  }

  ~CurlMulti() override {
    // Transfers still in flight belong to coroutines the loop will never resume.
    for (auto& [id, transfer] : live_) curl_multi_remove_handle(multi_, transfer->handle->curl);
    idle_.clear();
    owned_.clear();
    curl_multi_cleanup(multi_);  // closes the pooled connections through close_socket
    curl_share_cleanup(share_);
    if (timer_) loop_.cancel_timer(*timer_);
  }
  CurlMulti(const CurlMulti&) = delete;
  CurlMulti& operator=(const CurlMulti&) = delete;

  [[nodiscard]] event::EventLoop& loop() const { return loop_; }

  PooledHandle& take_handle() {
    if (idle_.empty()) {
      owned_.push_back(std::make_unique<PooledHandle>(tls_));
      adopt(owned_.back()->curl);
      return *owned_.back();
    }
    PooledHandle* handle = idle_.back();
    idle_.pop_back();
    return *handle;
  }

  void give_back(PooledHandle& handle) { idle_.push_back(&handle); }

  // Starts the transfer; libcurl asks for a timer at once, and the loop drives it from there.
  [[nodiscard]] CURLcode start(Transfer& transfer) {
    transfer.id = next_id_++;
    curl_easy_setopt(transfer.handle->curl, CURLOPT_PRIVATE, &transfer);
    if (curl_multi_add_handle(multi_, transfer.handle->curl) != CURLM_OK) {
      return CURLE_FAILED_INIT;
    }
    live_.emplace(transfer.id, &transfer);
    return CURLE_OK;
  }

  // Ends a transfer that has not finished, as if libcurl had aborted it.
  void abort(std::uint64_t id) {
    const auto found = live_.find(id);
    if (found == live_.end()) return;
    Transfer& transfer = *found->second;
    live_.erase(found);
    curl_multi_remove_handle(multi_, transfer.handle->curl);
    finish(transfer, CURLE_ABORTED_BY_CALLBACK);
  }

  void on_ready(int fd, std::uint32_t events) override {
    const auto kept = sockets_.find(fd);
    if (kept != sockets_.end() && !kept->second.wanted) {
      // Readable while pooled: closed by its server, most likely (see the class comment).
      loop_.unwatch(fd);
      kept->second.watched = 0;
      return;
    }
    int mask = 0;
    if ((events & EPOLLIN) != 0) mask |= CURL_CSELECT_IN;
    if ((events & EPOLLOUT) != 0) mask |= CURL_CSELECT_OUT;
    if ((events & (EPOLLERR | EPOLLHUP)) != 0) mask |= CURL_CSELECT_ERR;
    int running = 0;
    curl_multi_socket_action(multi_, fd, mask, &running);
    collect_finished();
  }

 private:
  // A socket of one of this multi's connections, from its opening to its closing.
  struct KeptSocket {
    std::uint32_t watched = 0;  // the events in the epoll set (0: not in it)
    bool wanted = false;        // libcurl waits on it: it asked for events and not yet for none
  };

  // The options that tie a new easy handle to this multi.
  void adopt(CURL* curl) {
    curl_easy_setopt(curl, CURLOPT_OPENSOCKETFUNCTION, open_socket);
    curl_easy_setopt(curl, CURLOPT_OPENSOCKETDATA, this);
    curl_easy_setopt(curl, CURLOPT_CLOSESOCKETFUNCTION, close_socket);
    curl_easy_setopt(curl, CURLOPT_CLOSESOCKETDATA, this);
    curl_easy_setopt(curl, CURLOPT_SHARE, share_);
  }

  static curl_socket_t open_socket(void* self, curlsocktype /*purpose*/, curl_sockaddr* address) {
    // Close-on-exec: a credential_process child must not hold our connections open.
    const int fd = ::socket(address->family, address->socktype | SOCK_CLOEXEC, address->protocol);
    if (fd < 0) return CURL_SOCKET_BAD;
    static_cast<CurlMulti*>(self)->sockets_.insert_or_assign(fd, KeptSocket{});
    return fd;
  }

  static int close_socket(void* self, curl_socket_t fd) {
    auto& multi = *static_cast<CurlMulti*>(self);
    const auto kept = multi.sockets_.find(fd);
    if (kept != multi.sockets_.end()) {
      // Out of the set before the number can be reused by another descriptor.
      if (kept->second.watched != 0) multi.loop_.unwatch(fd);
      multi.sockets_.erase(kept);
    }
    return ::close(fd);
  }

  static int on_socket(CURL* /*easy*/, curl_socket_t fd, int what, void* self,
                       void* /*socket_data*/) {
    auto& multi = *static_cast<CurlMulti*>(self);
    std::uint32_t events = 0;
    if (what == CURL_POLL_IN || what == CURL_POLL_INOUT) events |= EPOLLIN;
    if (what == CURL_POLL_OUT || what == CURL_POLL_INOUT) events |= EPOLLOUT;
    const auto kept = multi.sockets_.find(fd);
    if (kept == multi.sockets_.end()) {
      if (events == 0) {
        multi.loop_.unwatch(fd);
        return 0;
      }
      return multi.loop_.watch(fd, events, multi) ? 0 : -1;
    }
    KeptSocket& socket = kept->second;
    socket.wanted = events != 0;
    // Released, it stays watched for input only (see the class comment).
    const std::uint32_t target = socket.wanted ? events : socket.watched & EPOLLIN;
    if (target == socket.watched) return 0;
    if (target == 0) {
      multi.loop_.unwatch(fd);
    } else if (!multi.loop_.watch(fd, target, multi)) {
      return -1;
    }
    socket.watched = target;
    return 0;
  }

  static int on_timer(CURLM* /*multi*/, long timeout_ms, void* self) {
    auto& multi = *static_cast<CurlMulti*>(self);
    if (multi.timer_) {
      multi.loop_.cancel_timer(*multi.timer_);
      multi.timer_.reset();
    }
    if (timeout_ms < 0) return 0;
    // Never acted on inside libcurl's own call: the loop runs it, even when due at once.
    multi.timer_ = multi.loop_.add_timer(multi.loop_.now() + Millis{timeout_ms}, [&multi] {
      multi.timer_.reset();
      int running = 0;
      curl_multi_socket_action(multi.multi_, CURL_SOCKET_TIMEOUT, 0, &running);
      multi.collect_finished();
    });
    return 0;
  }

  void collect_finished() {
    int left = 0;
    while (const CURLMsg* message = curl_multi_info_read(multi_, &left)) {
      if (message->msg != CURLMSG_DONE) continue;
      void* data = nullptr;
      curl_easy_getinfo(message->easy_handle, CURLINFO_PRIVATE, &data);
      auto& transfer = *static_cast<Transfer*>(data);
      const CURLcode result = message->data.result;
      live_.erase(transfer.id);
      curl_multi_remove_handle(multi_, transfer.handle->curl);
      finish(transfer, result);
    }
  }

  void finish(Transfer& transfer, CURLcode result) {
    transfer.result = result;
    transfer.finished = true;
    if (transfer.waiter) loop_.resume_soon(transfer.waiter);
  }

  event::EventLoop& loop_;
  const TlsClientFiles tls_;
  CURLM* multi_;
  CURLSH* share_;
  std::unordered_map<curl_socket_t, KeptSocket> sockets_;
  std::optional<event::EventLoop::TimerId> timer_;
  std::vector<std::unique_ptr<PooledHandle>> owned_;
  std::vector<PooledHandle*> idle_;
  std::unordered_map<std::uint64_t, Transfer*> live_;
  std::uint64_t next_id_ = 1;
};

struct TransferDone {
  Transfer& transfer;
  bool await_ready() const noexcept { return transfer.finished; }
  void await_suspend(std::coroutine_handle<> handle) noexcept {
    transfer.waiter = Resumable::capture(handle);
  }
  void await_resume() const noexcept {}
};

// Cancels a transfer from the loop, wherever the stop was requested.
struct AbortTransfer {
  CurlMulti* multi;
  std::uint64_t id;
  void operator()() const {
    if (event::EventLoop::current() == &multi->loop()) {
      multi->abort(id);
    } else {
      multi->loop().post([multi = multi, id = id] { multi->abort(id); });
    }
  }
};

std::string attachment_key(const TlsClientFiles& tls) {
  return fmt::format("curl-multi\n{}\n{}\n{}", tls.cert_file, tls.key_file, tls.ca_file);
}

void set_request(CURL* curl, const HttpRequest& request, const HttpTimeouts& timeouts,
                 HeaderList& headers, Exchange& exchange) {
  curl_easy_setopt(curl, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(curl, CURLOPT_CONNECTTIMEOUT_MS, static_cast<long>(timeouts.connect.count()));
  curl_easy_setopt(curl, CURLOPT_TIMEOUT_MS, static_cast<long>(timeouts.total.count()));
  curl_easy_setopt(curl, CURLOPT_HTTPHEADER, headers.list());
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
}

}  // namespace

CurlTransport::CurlTransport(TlsClientFiles tls)
    : tls_(std::move(tls)), multi_key_(attachment_key(tls_)) {
  init_curl_once();
}

Task<HttpResult> CurlTransport::send(const HttpRequest& request, const HttpTimeouts& timeouts) {
  event::EventLoop* loop = event::EventLoop::current();
  if (loop == nullptr) {
    co_return std::unexpected(TransportError{.failure = TransportFailure::CouldNotConnect,
                                             .detail = "no event loop runs on this thread"});
  }
  CurlMulti& multi = loop->attachment<CurlMulti>(
      multi_key_, [&] { return std::make_unique<CurlMulti>(*loop, tls_); });
  constexpr std::string_view kNoExpect = "Expect:";  // no 100-continue round trip for large bodies
  // curl would label a body without a content type as a form; send what the caller said.
  constexpr std::string_view kNoContentType = "Content-Type:";
  HeaderList headers;
  std::size_t header_bytes = kNoExpect.size() + kNoContentType.size() + 2;
  for (const auto& [name, value] : request.headers) header_bytes += name.size() + value.size() + 3;
  headers.reserve(request.headers.size() + 2, header_bytes);
  for (const auto& [name, value] : request.headers) headers.add(name, value);
  headers.add(kNoExpect);
  if (!has_header(request, "content-type")) headers.add(kNoContentType);

  Transfer transfer;
  transfer.exchange.response.headers.reserve(kExpectedReplyHeaders);
  transfer.handle = &multi.take_handle();
  CURL* curl = transfer.handle->curl;
  transfer.handle->error_buffer[0] = '\0';
  set_request(curl, request, timeouts, headers, transfer.exchange);
  transfer.result = multi.start(transfer);
  if (transfer.result != CURLE_OK) {
    transfer.finished = true;
  } else {
    std::optional<std::stop_callback<AbortTransfer>> on_cancel;
    if (request.cancel.stop_possible()) {
      on_cancel.emplace(request.cancel, AbortTransfer{&multi, transfer.id});
    }
    co_await TransferDone{transfer};
  }
  const CURLcode code = transfer.result;
  HttpResult result;
  if (code != CURLE_OK) {
    const bool sent = request_sent(curl, request);
    result = std::unexpected(
        classify(code, sent,
                 transfer.exchange.too_large ? "reply too large" : transfer.handle->error_buffer));
  } else {
    curl_easy_getinfo(curl, CURLINFO_RESPONSE_CODE, &transfer.exchange.response.status);
    result = std::move(transfer.exchange.response);
  }
  multi.give_back(*transfer.handle);
  co_return result;
}

HttpResult BlockingTransport::send(const HttpRequest& request, const HttpTimeouts& timeouts) {
  return event::run_blocking(transport_.send(request, timeouts));
}

}  // namespace ic::http
