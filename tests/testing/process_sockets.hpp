// What the kernel knows of this process's descriptors, read from /proc/self: the TCP socket
// behind a local port, and how an epoll set of the process watches a descriptor. For tests of
// what a transport leaves registered, whatever its own bookkeeping believes.
//
//   const int fd = socket_with_local_port(server.client_ports().front());
//   EXPECT_TRUE(epoll_registration(fd));  // still in an epoll set
#pragma once

#include <optional>
#include <string>

namespace ic::testing {

// The descriptor of this process's IPv4 socket bound to 127.0.0.1:`port` (a client's end, by
// the port its server saw), or -1.
[[nodiscard]] int socket_with_local_port(int port);

// "events: <hex> data: <hex>" as an epoll set of this process registers `fd`, or nullopt when
// none does. The data distinguishes one registration from a later one of the same descriptor.
[[nodiscard]] std::optional<std::string> epoll_registration(int fd);

}  // namespace ic::testing
