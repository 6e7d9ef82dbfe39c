// Wraps any IdempotencyStore (leveldb's fault_injection_test idea): fail the next calls of an
// operation, or let a write happen and lose its response, which is what a timeout after
// sending looks like to the caller.
#pragma once

#include <functional>
#include <map>
#include <string>

#include "core/thread_annotations.hpp"
#include "idempotency/idempotency_store.hpp"

namespace ic::testing {

class FaultInjectingStore final : public idem::IdempotencyStore {
 public:
  enum class Fault { FailBeforeWrite, LoseResponse };

  explicit FaultInjectingStore(idem::IdempotencyStore& inner) : inner_(inner) {}

  // The next `times` calls of `operation` (claim, complete, fail, extend, release, get) fail.
  void inject(const std::string& operation, Fault fault, int times = 1) {
    MutexLock lock(mutex_);
    faults_[operation] = {fault, times};
  }
  // Called before every operation reaches the inner store.
  std::function<void(std::string_view operation)> before;

  std::expected<idem::ClaimResult, idem::StoreError> claim(
      const idem::ClaimRequest& request) override {
    return run("claim", [&] { return inner_.claim(request); });
  }
  std::expected<idem::WriteOutcome, idem::StoreError> complete(std::string_view key,
                                                               std::string_view token,
                                                               const idem::Completion& completion,
                                                               Instant now) override {
    return run("complete", [&] { return inner_.complete(key, token, completion, now); });
  }
  std::expected<idem::WriteOutcome, idem::StoreError> fail(std::string_view key,
                                                           std::string_view token,
                                                           const idem::Failure& failure,
                                                           Instant now) override {
    return run("fail", [&] { return inner_.fail(key, token, failure, now); });
  }
  std::expected<idem::WriteOutcome, idem::StoreError> extend(std::string_view key,
                                                             std::string_view token,
                                                             Instant until) override {
    return run("extend", [&] { return inner_.extend(key, token, until); });
  }
  std::expected<idem::WriteOutcome, idem::StoreError> release(std::string_view key,
                                                              std::string_view token) override {
    return run("release", [&] { return inner_.release(key, token); });
  }
  std::expected<std::optional<idem::ClaimRecord>, idem::StoreError> get(
      std::string_view key) override {
    return run("get", [&] { return inner_.get(key); });
  }

 private:
  template <class Call>
  auto run(const std::string& operation, Call call) -> decltype(call()) {
    if (before) before(operation);
    std::optional<Fault> fault;
    {
      MutexLock lock(mutex_);
      if (auto it = faults_.find(operation); it != faults_.end() && it->second.second > 0) {
        --it->second.second;
        fault = it->second.first;
      }
    }
    const idem::StoreError timeout{idem::ErrorKind::Retryable, "Timeout", "injected " + operation};
    if (fault == Fault::FailBeforeWrite) return std::unexpected(timeout);
    auto result = call();
    if (fault == Fault::LoseResponse) return std::unexpected(timeout);
    return result;
  }

  idem::IdempotencyStore& inner_;
  Mutex mutex_;
  std::map<std::string, std::pair<Fault, int>> faults_ GUARDED_BY(mutex_);
};

}  // namespace ic::testing
