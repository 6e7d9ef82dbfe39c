// An IdempotencyStore that forwards every call to another store, as leveldb's EnvWrapper does
// for Env: a decorator (a fault injector, instrumentation, a deliberately broken variant in a
// test) derives from it and overrides only the calls it changes.
//
//   class CountingClaims final : public idempotency::ForwardingStore {
//    public:
//     using ForwardingStore::ForwardingStore;
//     Task<ClaimReply> claim(const ClaimRequest& r) override {
//       ++claims;
//       return ForwardingStore::claim(r);
//     }
//     int claims = 0;
//   };
#pragma once

#include "idempotency/idempotency_store.hpp"

namespace ic::idempotency {

// Thread-safety and blocking: those of the target. Ownership: borrows `target`, which must
// outlive the wrapper.
class ForwardingStore : public IdempotencyStore {
 public:
  explicit ForwardingStore(IdempotencyStore& target) : target_(target) {}
  [[nodiscard]] IdempotencyStore& target() const { return target_; }

  [[nodiscard]] Task<ClaimReply> claim(const ClaimRequest& request) override {
    return target_.claim(request);
  }
  [[nodiscard]] Task<WriteReply> complete(std::string_view key, std::string_view token,
                                          const Completion& completion, Instant now) override {
    return target_.complete(key, token, completion, now);
  }
  [[nodiscard]] Task<WriteReply> fail(std::string_view key, std::string_view token,
                                      const Failure& failure, Instant now) override {
    return target_.fail(key, token, failure, now);
  }
  [[nodiscard]] Task<WriteReply> extend(std::string_view key, std::string_view token,
                                        Instant new_lease_until) override {
    return target_.extend(key, token, new_lease_until);
  }
  [[nodiscard]] Task<WriteReply> release(std::string_view key, std::string_view token) override {
    return target_.release(key, token);
  }
  [[nodiscard]] Task<ReadReply> get(std::string_view key) override { return target_.get(key); }

 private:
  IdempotencyStore& target_;
};

}  // namespace ic::idempotency
