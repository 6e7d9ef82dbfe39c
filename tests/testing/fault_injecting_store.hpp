// Wraps any IdempotencyStore (leveldb's fault_injection_test idea): fail the next calls of an
// operation, or let a write happen and lose its response, which is what a timeout after
// sending looks like to the caller. Calls without an armed fault reach the inner store
// unchanged, through idem::ForwardingStore.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "core/thread_annotations.hpp"
#include "idempotency/forwarding_store.hpp"

namespace ic::testing {

class FaultInjectingStore final : public idem::ForwardingStore {
 public:
  enum class Fault { FailBeforeWrite, LoseResponse };

  explicit FaultInjectingStore(idem::IdempotencyStore& inner) : ForwardingStore(inner) {}

  // The next `times` calls of `operation` fail.
  void inject(idem::StoreOperation operation, Fault fault, int times = 1) {
    MutexLock lock(mutex_);
    faults_[operation] = {fault, times};
  }
  // Called before every operation reaches the inner store.
  std::function<void(idem::StoreOperation operation)> before;

  std::expected<idem::ClaimResult, Error> claim(const idem::ClaimRequest& request) override {
    return run(idem::StoreOperation::Claim, [&] { return ForwardingStore::claim(request); });
  }
  std::expected<idem::WriteOutcome, Error> complete(std::string_view key, std::string_view token,
                                                    const idem::Completion& completion,
                                                    Instant now) override {
    return run(idem::StoreOperation::Complete,
               [&] { return ForwardingStore::complete(key, token, completion, now); });
  }
  std::expected<idem::WriteOutcome, Error> fail(std::string_view key, std::string_view token,
                                                const idem::Failure& failure,
                                                Instant now) override {
    return run(idem::StoreOperation::Fail,
               [&] { return ForwardingStore::fail(key, token, failure, now); });
  }
  std::expected<idem::WriteOutcome, Error> extend(std::string_view key, std::string_view token,
                                                  Instant until) override {
    return run(idem::StoreOperation::Extend,
               [&] { return ForwardingStore::extend(key, token, until); });
  }
  std::expected<idem::WriteOutcome, Error> release(std::string_view key,
                                                   std::string_view token) override {
    return run(idem::StoreOperation::Release, [&] { return ForwardingStore::release(key, token); });
  }
  std::expected<std::optional<idem::ClaimRecord>, Error> get(std::string_view key) override {
    return run(idem::StoreOperation::Get, [&] { return ForwardingStore::get(key); });
  }

 private:
  template <class Call>
  auto run(idem::StoreOperation operation, Call call) -> decltype(call()) {
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
                        .message = "injected " + std::string(idem::to_string(operation))};
    if (fault == Fault::FailBeforeWrite) return std::unexpected(timeout);
    auto result = call();
    if (fault == Fault::LoseResponse) return std::unexpected(timeout);
    return result;
  }

  Mutex mutex_;
  std::map<idem::StoreOperation, std::pair<Fault, int>> faults_ GUARDED_BY(mutex_);
};

}  // namespace ic::testing
