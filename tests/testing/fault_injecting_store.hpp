// Wraps any IdempotencyStore (leveldb's fault_injection_test idea): fail the next calls of an
// operation, or let a write happen and lose its response, which is what a timeout after
// sending looks like to the caller. Calls without an armed fault reach the inner store
// unchanged, through idempotency::ForwardingStore. Its tasks suspend only where the inner
// store's do.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>

#include "core/thread_annotations.hpp"
#include "idempotency/forwarding_store.hpp"

namespace ic::testing {

// Thread-safety: the inner store's; faults may be armed from any thread. `before` is set before
// the first call.
class FaultInjectingStore final : public idempotency::ForwardingStore {
 public:
  enum class Fault { FailBeforeWrite, LoseResponse };

  explicit FaultInjectingStore(idempotency::IdempotencyStore& inner) : ForwardingStore(inner) {}

  // The next `times` calls of `operation` fail.
  void inject(idempotency::StoreOperation operation, Fault fault, int times = 1) {
    MutexLock lock(mutex_);
    faults_[operation] = {fault, times};
  }
  // Called before every operation reaches the inner store.
  std::function<void(idempotency::StoreOperation operation)> before;

  Task<idempotency::ClaimReply> claim(const idempotency::ClaimRequest& request) override {
    return run(idempotency::StoreOperation::Claim, ForwardingStore::claim(request));
  }
  Task<idempotency::WriteReply> complete(std::string_view key, std::string_view token,
                                         const idempotency::Completion& completion,
                                         Instant now) override {
    return run(idempotency::StoreOperation::Complete,
               ForwardingStore::complete(key, token, completion, now));
  }
  Task<idempotency::WriteReply> fail(std::string_view key, std::string_view token,
                                     const idempotency::Failure& failure, Instant now) override {
    return run(idempotency::StoreOperation::Fail, ForwardingStore::fail(key, token, failure, now));
  }
  Task<idempotency::WriteReply> extend(std::string_view key, std::string_view token,
                                       Instant until) override {
    return run(idempotency::StoreOperation::Extend, ForwardingStore::extend(key, token, until));
  }
  Task<idempotency::WriteReply> release(std::string_view key, std::string_view token) override {
    return run(idempotency::StoreOperation::Release, ForwardingStore::release(key, token));
  }
  Task<idempotency::ReadReply> get(std::string_view key) override {
    return run(idempotency::StoreOperation::Get, ForwardingStore::get(key));
  }

 private:
  // `call` is the inner store's task, not started yet (tasks are lazy): a fault before the
  // write drops it unstarted, so nothing reaches the inner store.
  template <class Reply>
  Task<Reply> run(idempotency::StoreOperation operation, Task<Reply> call) {
    if (before) before(operation);
    const std::optional<Fault> fault = take(operation);
    if (fault == Fault::FailBeforeWrite) co_return std::unexpected(injected(operation));
    auto result = co_await std::move(call);
    if (fault == Fault::LoseResponse) co_return std::unexpected(injected(operation));
    co_return result;
  }

  std::optional<Fault> take(idempotency::StoreOperation operation) {
    MutexLock lock(mutex_);
    const auto it = faults_.find(operation);
    if (it == faults_.end() || it->second.second <= 0) return std::nullopt;
    --it->second.second;
    return it->second.first;
  }

  static Error injected(idempotency::StoreOperation operation) {
    return Error{.error_class = ErrorClass::Retryable,
                 .code = "Timeout",
                 .message = "injected " + std::string(idempotency::to_string(operation))};
  }

  Mutex mutex_;
  std::map<idempotency::StoreOperation, std::pair<Fault, int>> faults_ GUARDED_BY(mutex_);
};

}  // namespace ic::testing
