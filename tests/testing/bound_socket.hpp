// A TCP socket bound to a free loopback port and not listening: connecting to it is refused at
// once, and no other process can take the port while the test holds it. listen() on fd() for
// a peer that accepts connections (or, with a full backlog, never completes them) but never
// answers.
//
//   BoundSocket refusing;
//   client.send({.method = "POST", .url = refusing.url("/")}, timeouts);  // CouldNotConnect
#pragma once

#include <string>
#include <string_view>

namespace ic::testing {

// Ownership: owns the socket, closed with the object. Not thread-safe.
class BoundSocket {
 public:
  // Throws std::runtime_error when no loopback port can be bound.
  BoundSocket();
  ~BoundSocket();
  BoundSocket(const BoundSocket&) = delete;
  BoundSocket& operator=(const BoundSocket&) = delete;

  [[nodiscard]] int fd() const { return fd_; }
  // http://127.0.0.1:PORT followed by `path`.
  [[nodiscard]] std::string url(std::string_view path = "") const;

 private:
  int fd_;
  int port_ = 0;
};

}  // namespace ic::testing
