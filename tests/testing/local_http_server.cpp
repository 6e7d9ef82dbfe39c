#include "testing/local_http_server.hpp"

#include <chrono>
#include <stdexcept>

namespace ic::testing {

std::string RecordedRequest::header(const std::string& name) const {
  const auto it = headers.find(name);
  return it == headers.end() ? std::string{} : it->second;
}

LocalHttpServer::Routes& LocalHttpServer::Routes::Get(const std::string& pattern, Handler handler) {
  return add("GET", pattern, std::move(handler));
}

LocalHttpServer::Routes& LocalHttpServer::Routes::Post(const std::string& pattern,
                                                       Handler handler) {
  return add("POST", pattern, std::move(handler));
}

LocalHttpServer::Routes& LocalHttpServer::Routes::Put(const std::string& pattern, Handler handler) {
  return add("PUT", pattern, std::move(handler));
}

LocalHttpServer::Routes& LocalHttpServer::Routes::add(std::string method,
                                                      const std::string& pattern, Handler handler) {
  routes_.push_back({std::move(method), std::regex(pattern), std::move(handler)});
  return *this;
}

bool LocalHttpServer::Routes::dispatch(const httplib::Request& request,
                                       httplib::Response& response) const {
  for (const auto& route : routes_) {
    if (route.method == request.method && std::regex_match(request.path, route.pattern)) {
      route.handler(request, response);
      return true;
    }
  }
  return false;
}

LocalHttpServer::LocalHttpServer() {
  // Every request comes through here, so it is recorded, with its body, whatever the routes;
  // httplib reads the body only after its pre-routing hook, too late to record it there.
  const auto record_and_dispatch = [this](const httplib::Request& request,
                                          httplib::Response& response) {
    {
      MutexLock lock(mutex_);
      requests_.push_back({request.method, request.path, request.headers, request.body});
    }
    if (!routes_.dispatch(request, response)) response.status = 404;
  };
  server_.Get(".*", record_and_dispatch);
  server_.Post(".*", record_and_dispatch);
  server_.Put(".*", record_and_dispatch);
  server_.Patch(".*", record_and_dispatch);
  server_.Delete(".*", record_and_dispatch);
  server_.Options(".*", record_and_dispatch);
}

LocalHttpServer::LocalHttpServer(const std::function<void(Routes&)>& add_routes)
    : LocalHttpServer() {
  add_routes(routes_);
  start();
}

void LocalHttpServer::close_connections_after_each_request() {
  server_.set_keep_alive_max_count(1);
}

void LocalHttpServer::start() {
  port_ = server_.bind_to_any_port("127.0.0.1");
  if (port_ <= 0) throw std::runtime_error("cannot bind 127.0.0.1");
  // bind_to_any_port also listens: clients queue in the backlog until the loop accepts.
  thread_ = std::thread([this] { server_.listen_after_bind(); });
  // stop() is a no-op until the accept loop runs, so wait for it or stop could hang join.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!server_.is_running()) {
    if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("server not up");
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
}

void LocalHttpServer::stop() {
  server_.stop();
  if (thread_.joinable()) thread_.join();
}

std::string LocalHttpServer::url(std::string_view path) const {
  return "http://127.0.0.1:" + std::to_string(port_) + std::string(path);
}

std::vector<RecordedRequest> LocalHttpServer::requests() const {
  MutexLock lock(mutex_);
  return requests_;
}

}  // namespace ic::testing
