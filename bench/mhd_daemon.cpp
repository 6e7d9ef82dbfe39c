// Start-up and shutdown of the bench's libmicrohttpd servers (mhd_daemon.hpp).
#include "mhd_daemon.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>

#include <csignal>
#include <iostream>
#include <nlohmann/json.hpp>
#include <vector>

namespace ic::bench {

int serve_until_signalled(const MhdServer& server) {
  // Signals are taken by this thread with sigwait; blocked before libmicrohttpd or on_bound
  // start a thread, so every thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = 0;  // any free port, reported below
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::vector<MHD_OptionItem> options(server.options.begin(), server.options.end());
  options.push_back({MHD_OPTION_END, 0, nullptr});
  MHD_Daemon* daemon = MHD_start_daemon(server.flags, 0, nullptr, nullptr, server.answer,
                                        server.answer_cls, MHD_OPTION_SOCK_ADDR, &address,
                                        MHD_OPTION_ARRAY, options.data(), MHD_OPTION_END);
  if (daemon == nullptr) {
    std::cerr << R"({"event":"start_failed"})"
              << "\n";
    return 2;
  }
  const MHD_DaemonInfo* info = MHD_get_daemon_info(daemon, MHD_DAEMON_INFO_BIND_PORT);
  if (info == nullptr || info->port == 0) {
    std::cerr << R"({"event":"bind_failed"})"
              << "\n";
    MHD_stop_daemon(daemon);
    return 2;
  }
  if (server.on_bound) server.on_bound(info->port);
  std::cout << nlohmann::json{{"event", "listening"}, {"port", info->port}}.dump() << std::endl;
  int signal = 0;
  sigwait(&stop_signals, &signal);
  if (server.on_stop) server.on_stop();
  MHD_stop_daemon(daemon);
  return 0;
}

}  // namespace ic::bench
