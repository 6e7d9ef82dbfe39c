// A QueuePort that forwards every call to another port, as leveldb's EnvWrapper does for Env:
// a decorator (a fault injector, instrumentation) derives from it and overrides only the calls
// it changes.
//
//   class NoDeadLetters final : public consumer::ForwardingQueue {
//    public:
//     using ForwardingQueue::ForwardingQueue;
//     std::expected<void, Error> send_to_dlq(std::string_view,
//                                                 const MessageAttributes&) override {
//       return std::unexpected(Error{.error_class = ErrorClass::Permanent});
//     }
//   };
#pragma once

#include "consumer/queue_port.hpp"

namespace ic::consumer {

// Thread-safety and blocking: those of the target. Ownership: borrows `target`, which must
// outlive the wrapper.
class ForwardingQueue : public QueuePort {
 public:
  explicit ForwardingQueue(QueuePort& target) : target_(target) {}

  [[nodiscard]] QueuePort& target() const { return target_; }

  [[nodiscard]] std::expected<std::vector<Message>, Error> receive(
      int max_messages, std::chrono::seconds wait) override {
    return target_.receive(max_messages, wait);
  }
  [[nodiscard]] std::expected<BatchResult, Error> delete_batch(
      std::span<const DeleteEntry> entries) override {
    return target_.delete_batch(entries);
  }
  [[nodiscard]] std::expected<BatchResult, Error> change_visibility_batch(
      std::span<const VisibilityEntry> entries) override {
    return target_.change_visibility_batch(entries);
  }
  [[nodiscard]] std::expected<void, Error> send_to_dlq(
      std::string_view body, const MessageAttributes& attributes) override {
    return target_.send_to_dlq(body, attributes);
  }

 private:
  QueuePort& target_;
};

}  // namespace ic::consumer
