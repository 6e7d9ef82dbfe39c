// Wraps any IdempotencyStore (leveldb's fault_injection_test idea): fail the next calls of an
// operation, or let a write happen and lose its response, which is what a timeout after
// sending looks like to the caller. Calls without an armed fault reach the inner store
// unchanged, through idempotency::ForwardingStore.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "core/thread_annotations.hpp"
#include "idempotency/forwarding_store.hpp"

namespace ic::testing {

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

  std::expected<idempotency::ClaimResult, Error> claim(
      const idempotency::ClaimRequest& request) override {
    return run(idempotency::StoreOperation::Claim, [&] { return ForwardingStore::claim(request); });
  }
  std::expected<idempotency::WriteOutcome, Error> complete(
      std::string_view key, std::string_view token, const idempotency::Completion& completion,
      Instant now) override {
    return run(idempotency::StoreOperation::Complete,
               [&] { return ForwardingStore::complete(key, token, completion, now); });
  }
  std::expected<idempotency::WriteOutcome, Error> fail(std::string_view key, std::string_view token,
                                                       const idempotency::Failure& failure,
                                                       Instant now) override {
    return run(idempotency::StoreOperation::Fail,
               [&] { return ForwardingStore::fail(key, token, failure, now); });
  }
  std::expected<idempotency::WriteOutcome, Error> extend(std::string_view key,
                                                         std::string_view token,
                                                         Instant until) override {
    return run(idempotency::StoreOperation::Extend,
               [&] { return ForwardingStore::extend(key, token, until); });
  }
  std::expected<idempotency::WriteOutcome, Error> release(std::string_view key,
                                                          std::string_view token) override {
    return run(idempotency::StoreOperation::Release,
               [&] { return ForwardingStore::release(key, token); });
  }
  std::expected<std::optional<idempotency::ClaimRecord>, Error> get(std::string_view key) override {
    return run(idempotency::StoreOperation::Get, [&] { return ForwardingStore::get(key); });
  }

 private:
  template <class Call>
  auto run(idempotency::StoreOperation operation, Call call) -> decltype(call()) {
    if (before) before(operation);
    std::optional<Fault> fault;
    {
      MutexLock lock(mutex_);
      if (auto it = faults_.find(operation); it != faults_.end() && it->second.second > 0) {
        --it->second.second;
        fault = it->second.first;
      }
    }
    const Error timeout{.error_class = ErrorClass::Retryable,
                        .code = "Timeout",
                        .message = "injected " + std::string(idempotency::to_string(operation))};
    if (fault == Fault::FailBeforeWrite) return std::unexpected(timeout);
    auto result = call();
    if (fault == Fault::LoseResponse) return std::unexpected(timeout);
    return result;
  }

  Mutex mutex_;
  std::map<idempotency::StoreOperation, std::pair<Fault, int>> faults_ GUARDED_BY(mutex_);
};

}  // namespace ic::testing
