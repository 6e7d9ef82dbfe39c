// Helpers shared by the listener container's tests (over FakeQueue, and over SQS on moto): a
// recording observer, polling with a deadline, and a container running on its own thread for
// the length of a test.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "consumer/listener_container.hpp"
#include "consumer/listener_observer.hpp"

namespace ic::testing {

// Polls `condition` until it holds or `timeout` passes; returns its last value.
inline bool eventually(const std::function<bool()>& condition,
                       std::chrono::milliseconds timeout = std::chrono::seconds{10}) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds{2});
  }
  return true;
}

struct EntryFailure {
  consumer::BatchAction action;
  std::string message_id;
  Error error;
  bool final;
};

class RecordingObserver final : public consumer::ListenerObserver {
 public:
  void on_received(std::size_t count) override {
    locked([&] { received_ += count; });
  }
  void on_receive_error(const Error& error, Millis delay) override {
    locked([&] { receive_errors_.emplace_back(error, delay); });
  }
  void on_disposition(consumer::DispositionKind kind, std::string_view reason, Millis) override {
    locked([&] { dispositions_.emplace_back(kind, std::string(reason)); });
  }
  void on_handler_error(std::string_view message_id, std::string_view) override {
    locked([&] { handler_errors_.emplace_back(message_id); });
  }
  void on_dlq_send_failed(std::string_view message_id, const Error&) override {
    locked([&] { dlq_failures_.emplace_back(message_id); });
  }
  void on_batch_entry_failed(consumer::BatchAction action, std::string_view message_id,
                             const Error& error, bool final) override {
    locked([&] { entry_failures_.push_back({action, std::string(message_id), error, final}); });
  }
  void on_heartbeat(std::string_view, bool extended) override {
    locked([&] { heartbeats_.push_back(extended); });
  }
  void on_in_flight(std::size_t count) override {
    locked([&] { max_in_flight_ = std::max(max_in_flight_, count); });
  }
  void on_returned_unstarted(std::size_t count) override {
    locked([&] { returned_unstarted_ += count; });
  }
  void on_grace_exceeded(std::size_t still_running) override {
    locked([&] { grace_exceeded_.push_back(still_running); });
  }

  std::size_t received() const { return copy(received_); }
  std::vector<std::pair<Error, Millis>> receive_errors() const { return copy(receive_errors_); }
  std::vector<std::pair<consumer::DispositionKind, std::string>> dispositions() const {
    return copy(dispositions_);
  }
  std::vector<std::string> handler_errors() const { return copy(handler_errors_); }
  std::vector<std::string> dlq_failures() const { return copy(dlq_failures_); }
  std::vector<EntryFailure> entry_failures() const { return copy(entry_failures_); }
  std::vector<bool> heartbeats() const { return copy(heartbeats_); }
  std::size_t max_in_flight() const { return copy(max_in_flight_); }
  std::size_t returned_unstarted() const { return copy(returned_unstarted_); }
  std::vector<std::size_t> grace_exceeded() const { return copy(grace_exceeded_); }

 private:
  template <class F>
  void locked(F&& f) {
    std::lock_guard lock(mutex_);
    f();
  }
  template <class T>
  T copy(const T& value) const {
    std::lock_guard lock(mutex_);
    return value;
  }

  mutable std::mutex mutex_;
  std::size_t received_ = 0;
  std::vector<std::pair<Error, Millis>> receive_errors_;
  std::vector<std::pair<consumer::DispositionKind, std::string>> dispositions_;
  std::vector<std::string> handler_errors_;
  std::vector<std::string> dlq_failures_;
  std::vector<EntryFailure> entry_failures_;
  std::vector<bool> heartbeats_;
  std::size_t max_in_flight_ = 0;
  std::size_t returned_unstarted_ = 0;
  std::vector<std::size_t> grace_exceeded_;
};

// Runs container.run() on a thread; stop() (or the destructor) requests a stop and joins.
class Running {
 public:
  explicit Running(consumer::ListenerContainer& container)
      : container_(container), thread_([this] { container_.run(); }) {}
  ~Running() { stop(); }
  Running(const Running&) = delete;
  Running& operator=(const Running&) = delete;
  void stop() {
    container_.request_stop();
    if (thread_.joinable()) thread_.join();
  }

 private:
  consumer::ListenerContainer& container_;
  std::thread thread_;
};

}  // namespace ic::testing
