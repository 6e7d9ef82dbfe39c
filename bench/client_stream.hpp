// The client side of one bench/net_proxy.cpp connection: its bytes, read and written without
// blocking, either as they come on the socket or through a server-side TLS session (OpenSSL),
// so that the proxy's loop does not care which. Owned by the one loop thread; not thread-safe.
#pragma once

#include <openssl/ssl.h>

#include <cstddef>
#include <expected>
#include <memory>
#include <span>
#include <string>
#include <string_view>

namespace ic::bench {

struct SslFree {
  void operator()(SSL* ssl) const { SSL_free(ssl); }
};
struct SslCtxFree {
  void operator()(SSL_CTX* ctx) const { SSL_CTX_free(ctx); }
};

// The proxy's certificate and, for mutual TLS, the CA whose client certificates it requires.
class TlsServerContext {
 public:
  // PEM files; an empty `client_ca` accepts clients without a certificate.
  static std::expected<TlsServerContext, std::string> load(const std::string& cert,
                                                           const std::string& key,
                                                           const std::string& client_ca);
  SSL_CTX* get() const { return ctx_.get(); }

 private:
  explicit TlsServerContext(SSL_CTX* ctx) : ctx_(ctx) {}
  std::unique_ptr<SSL_CTX, SslCtxFree> ctx_;
};

class ClientStream {
 public:
  enum class Status { kDone, kWouldBlock, kClosed };
  struct Io {
    std::size_t bytes = 0;  // read or written; 0 unless kDone
    Status status = Status::kDone;
  };

  // A plain stream on `fd` (not owned: the proxy closes it).
  explicit ClientStream(int fd) : fd_(fd) {}
  // A TLS stream: the server side of a handshake still to come on `fd`.
  ClientStream(int fd, const TlsServerContext& tls);

  bool tls() const { return ssl_ != nullptr; }
  // Plain streams are established at once; a TLS one once handshake() returned kDone.
  bool established() const { return established_; }
  // Advances the handshake; kClosed when it failed (`error` then says why).
  Status handshake(std::string& error);
  // Whether the client sent a certificate (verified: an unverified one fails the handshake).
  bool client_certificate() const;
  Io read(std::span<char> buffer);
  // Writes a prefix of `bytes`. A TLS write that would block must be repeated with `bytes`
  // starting at the same byte (it may be longer, and may have moved).
  Io write(std::string_view bytes);
  // The last TLS read or handshake step stopped because the socket would not take a write:
  // the loop retries it shortly instead of waiting for the socket to be readable.
  bool retry_soon() const { return retry_soon_; }

 private:
  Io outcome(int result);

  int fd_;
  std::unique_ptr<SSL, SslFree> ssl_;
  bool established_ = true;
  bool retry_soon_ = false;
};

}  // namespace ic::bench
