// A QueuePort that forwards every call to another port, as leveldb's EnvWrapper does for Env:
// a decorator (a fault injector, instrumentation) derives from it and overrides only the calls
// it changes.
//
//   class NoDeadLetters final : public consumer::ForwardingQueue {
//    public:
//     using ForwardingQueue::ForwardingQueue;
//     Task<std::expected<void, Error>> send_to_dlq(std::string_view,
//                                                  const MessageAttributes&) override {
//       co_return std::unexpected(Error{.error_class = ErrorClass::Permanent});
//     }
//   };
#pragma once

#include "consumer/queue_port.hpp"

namespace ic::consumer {

// Thread-safety and waiting: those of the target. Ownership: borrows `target`, which must
// outlive the wrapper.
class ForwardingQueue : public QueuePort {
 public:
  explicit ForwardingQueue(QueuePort& target) : target_(target) {}

  [[nodiscard]] QueuePort& target() const { return target_; }

  [[nodiscard]] Task<Received> receive(int max_messages, std::chrono::seconds wait,
                                       std::stop_token stop) override {
    return target_.receive(max_messages, wait, std::move(stop));
  }
  [[nodiscard]] Task<BatchReply> delete_batch(std::span<const DeleteEntry> entries) override {
    return target_.delete_batch(entries);
  }
  [[nodiscard]] Task<BatchReply> change_visibility_batch(
      std::span<const VisibilityEntry> entries) override {
    return target_.change_visibility_batch(entries);
  }
  [[nodiscard]] Task<std::expected<void, Error>> send_to_dlq(
      std::string_view body, const MessageAttributes& attributes) override {
    return target_.send_to_dlq(body, attributes);
  }

 private:
  QueuePort& target_;
};

}  // namespace ic::consumer
