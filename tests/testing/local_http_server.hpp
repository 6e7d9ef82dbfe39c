// A cpp-httplib server on 127.0.0.1 with a kernel-chosen port, standing in for the far end in
// tests of our HTTP clients (the curl transport, the AWS credential providers, the bank
// adapters). It records every request, body included, before its handler runs, so a test sees
// a request even while the handler holds the answer back; it serves on its own thread from
// start() until stop() or destruction.
//
//   LocalHttpServer server;
//   server.routes().Get("/ping", [](const httplib::Request&, httplib::Response& response) {
//     response.set_content("pong", "text/plain");
//   });
//   server.start();
//   transport.send({.method = "GET", .url = server.url("/ping")}, timeouts);
//   EXPECT_EQ(server.requests().at(0).path, "/ping");
#pragma once

#include <httplib.h>

#include <functional>
#include <regex>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "core/thread_annotations.hpp"

namespace ic::testing {

struct RecordedRequest {
  std::string method;
  std::string path;
  httplib::Headers headers;
  std::string body;
  // The header's value, "" when absent; names compare case-insensitively (httplib::Headers).
  [[nodiscard]] std::string header(const std::string& name) const;
};

// Thread-safety: register routes and call start() from one thread; requests(), url() and
// stop() may then be called from any thread. Handlers run on the server's threads.
class LocalHttpServer {
 public:
  using Handler = std::function<void(const httplib::Request&, httplib::Response&)>;

  // Handlers by method and path pattern, matched against the whole path as httplib matches
  // them; the first registered match answers, and a request nothing matches gets a 404. The
  // method names are httplib::Server's, so a route reads as it would on a bare server.
  class Routes {
   public:
    Routes& Get(const std::string& pattern, Handler handler);
    Routes& Post(const std::string& pattern, Handler handler);
    Routes& Put(const std::string& pattern, Handler handler);

   private:
    friend class LocalHttpServer;
    struct Route {
      std::string method;
      std::regex pattern;
      Handler handler;
    };
    Routes& add(std::string method, const std::string& pattern, Handler handler);
    // Answers with the first route that matches; false when none does.
    bool dispatch(const httplib::Request& request, httplib::Response& response) const;

    std::vector<Route> routes_;
  };

  LocalHttpServer();
  // Registers routes with `add_routes`, then starts.
  explicit LocalHttpServer(const std::function<void(Routes&)>& add_routes);
  ~LocalHttpServer() { stop(); }
  LocalHttpServer(const LocalHttpServer&) = delete;
  LocalHttpServer& operator=(const LocalHttpServer&) = delete;

  // Register routes here, before start().
  Routes& routes() { return routes_; }
  // Before start(): one request per connection. Stopping waits for every open connection, so
  // a server that outlives its clients' idle keep-alive connections stops at once with this.
  void close_connections_after_each_request();

  // Binds a free port and serves; throws std::runtime_error when it cannot.
  void start();
  // Stops serving and joins the server thread; waits for handlers still running.
  void stop();

  // http://127.0.0.1:PORT followed by `path`.
  [[nodiscard]] std::string url(std::string_view path = "") const;
  [[nodiscard]] std::vector<RecordedRequest> requests() const;

 private:
  Routes routes_;
  mutable Mutex mutex_;
  std::vector<RecordedRequest> requests_ GUARDED_BY(mutex_);
  int port_ = 0;
  httplib::Server server_;
  std::thread thread_;
};

}  // namespace ic::testing
