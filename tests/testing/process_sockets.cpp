#include "testing/process_sockets.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <vector>

namespace ic::testing {
namespace {

namespace fs = std::filesystem;

// This process's descriptors, by number.
std::vector<int> open_descriptors() {
  std::vector<int> fds;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc/self/fd", error)) {
    try {
      fds.push_back(std::stoi(entry.path().filename().string()));
    } catch (const std::exception&) {
      // not a number: not a descriptor
    }
  }
  return fds;
}

bool is_epoll(int fd) {
  std::error_code error;
  const auto target = fs::read_symlink("/proc/self/fd/" + std::to_string(fd), error);
  return !error && target.string() == "anon_inode:[eventpoll]";
}

}  // namespace

int socket_with_local_port(int port) {
  for (const int fd : open_descriptors()) {
    sockaddr_in address{};
    socklen_t length = sizeof address;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0) continue;
    if (address.sin_family == AF_INET && ntohs(address.sin_port) == port) return fd;
  }
  return -1;
}

std::optional<std::string> epoll_registration(int fd) {
  for (const int epoll_fd : open_descriptors()) {
    if (!is_epoll(epoll_fd)) continue;
    std::ifstream info("/proc/self/fdinfo/" + std::to_string(epoll_fd));
    // Lines "tfd: <fd> events: <hex> data: <hex>  pos:... ino:... sdev:...".
    for (std::string line; std::getline(info, line);) {
      std::istringstream fields(line);
      std::string tag, tfd, events_tag, events, data_tag, data;
      if (!(fields >> tag >> tfd >> events_tag >> events >> data_tag >> data)) continue;
      if (tag == "tfd:" && tfd == std::to_string(fd)) return "events: " + events + " data: " + data;
    }
  }
  return std::nullopt;
}

}  // namespace ic::testing
