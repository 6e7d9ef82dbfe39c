#include "client_stream.hpp"

#include <openssl/err.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <climits>

namespace ic::bench {

namespace {

// The oldest error OpenSSL queued, as text (it says why a load or a handshake failed).
std::string ssl_error(std::string_view fallback) {
  const unsigned long code = ERR_get_error();
  ERR_clear_error();
  if (code == 0) return std::string(fallback);
  std::array<char, 256> text{};
  ERR_error_string_n(code, text.data(), text.size());
  return text.data();
}

}  // namespace

std::expected<TlsServerContext, std::string> TlsServerContext::load(const std::string& cert,
                                                                    const std::string& key,
                                                                    const std::string& client_ca) {
  SSL_CTX* raw = SSL_CTX_new(TLS_server_method());
  if (raw == nullptr) return std::unexpected(ssl_error("SSL_CTX_new failed"));
  TlsServerContext context(raw);
  if (SSL_CTX_use_certificate_chain_file(raw, cert.c_str()) != 1 ||
      SSL_CTX_use_PrivateKey_file(raw, key.c_str(), SSL_FILETYPE_PEM) != 1 ||
      SSL_CTX_check_private_key(raw) != 1)
    return std::unexpected(ssl_error("certificate or key refused"));
  // A partial write returns what it wrote; its retry may come from a buffer that has moved
  // (the proxy's pending bytes, appended to between tries).
  SSL_CTX_set_mode(raw, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
  // Resumed sessions need an id context once client certificates are verified.
  static constexpr std::string_view kSessionContext = "ic_bench_net_proxy";
  SSL_CTX_set_session_id_context(
      raw, reinterpret_cast<const unsigned char*>(kSessionContext.data()), kSessionContext.size());
  if (!client_ca.empty()) {
    STACK_OF(X509_NAME)* names = SSL_load_client_CA_file(client_ca.c_str());
    if (names == nullptr || SSL_CTX_load_verify_locations(raw, client_ca.c_str(), nullptr) != 1)
      return std::unexpected(ssl_error("client CA refused"));
    SSL_CTX_set_client_CA_list(raw, names);
    SSL_CTX_set_verify(raw, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, nullptr);
  }
  return context;
}

ClientStream::ClientStream(int fd, const TlsServerContext& tls)
    : fd_(fd), ssl_(SSL_new(tls.get())), established_(false) {
  SSL_set_fd(ssl_.get(), fd);
  SSL_set_accept_state(ssl_.get());
}

ClientStream::Status ClientStream::handshake(std::string& error) {
  ERR_clear_error();
  const int result = SSL_do_handshake(ssl_.get());
  if (result == 1) {
    established_ = true;
    retry_soon_ = false;
    return Status::kDone;
  }
  const Io io = outcome(result);
  if (io.status == Status::kClosed) error = ssl_error("the client closed the connection");
  return io.status;
}

bool ClientStream::client_certificate() const {
  return ssl_ && SSL_get0_peer_certificate(ssl_.get()) != nullptr;
}

ClientStream::Io ClientStream::read(std::span<char> buffer) {
  if (!ssl_) {
    const ssize_t got = ::read(fd_, buffer.data(), buffer.size());
    if (got > 0) return {static_cast<std::size_t>(got), Status::kDone};
    if (got < 0 && (errno == EAGAIN || errno == EINTR)) return {0, Status::kWouldBlock};
    return {0, Status::kClosed};
  }
  ERR_clear_error();
  const int size = static_cast<int>(std::min<std::size_t>(buffer.size(), INT_MAX));
  const int got = SSL_read(ssl_.get(), buffer.data(), size);
  if (got > 0) return {static_cast<std::size_t>(got), Status::kDone};
  return outcome(got);
}

ClientStream::Io ClientStream::write(std::string_view bytes) {
  if (!ssl_) {
    const ssize_t put = ::write(fd_, bytes.data(), bytes.size());
    if (put >= 0) return {static_cast<std::size_t>(put), Status::kDone};
    if (errno == EAGAIN || errno == EINTR) return {0, Status::kWouldBlock};
    return {0, Status::kClosed};
  }
  ERR_clear_error();
  const int size = static_cast<int>(std::min<std::size_t>(bytes.size(), INT_MAX));
  const int put = SSL_write(ssl_.get(), bytes.data(), size);
  if (put > 0) return {static_cast<std::size_t>(put), Status::kDone};
  return outcome(put);
}

ClientStream::Io ClientStream::outcome(int result) {
  switch (SSL_get_error(ssl_.get(), result)) {
    case SSL_ERROR_WANT_READ:
      retry_soon_ = false;
      return {0, Status::kWouldBlock};
    case SSL_ERROR_WANT_WRITE:
      retry_soon_ = true;
      return {0, Status::kWouldBlock};
    default:  // ZERO_RETURN (the client's close_notify), SYSCALL, SSL: the connection is over
      return {0, Status::kClosed};
  }
}

}  // namespace ic::bench
