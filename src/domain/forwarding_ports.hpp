// Ports that forward every call to another implementation of the same port, as leveldb's
// EnvWrapper does for Env: a decorator of the bank's debit or of the notification gateway
// (a fault injector, instrumentation) derives from one and overrides only what it changes.
//
//   class BankOutage final : public domain::ForwardingDebitPort {
//    public:
//     using ForwardingDebitPort::ForwardingDebitPort;
//     Task<DebitResult> debit(const Charge& charge, std::string_view key) override {
//       if (down) co_return DebitUnavailable{"injected outage"};
//       co_return co_await ForwardingDebitPort::debit(charge, key);
//     }
//     bool down = false;
//   };
#pragma once

#include "domain/ports.hpp"

namespace ic::domain {

// Thread-safety: that of the target. Ownership: borrows `target`, which must outlive the
// wrapper.
class ForwardingDebitPort : public AccountDebitPort {
 public:
  explicit ForwardingDebitPort(AccountDebitPort& target) : target_(target) {}

  [[nodiscard]] AccountDebitPort& target() const { return target_; }

  [[nodiscard]] Task<DebitResult> debit(const Charge& charge,
                                        std::string_view idempotency_key) override {
    return target_.debit(charge, idempotency_key);
  }

 private:
  AccountDebitPort& target_;
};

// Thread-safety: that of the target. Ownership: borrows `target`, which must outlive the
// wrapper.
class ForwardingNotificationPort : public NotificationPort {
 public:
  explicit ForwardingNotificationPort(NotificationPort& target) : target_(target) {}

  [[nodiscard]] NotificationPort& target() const { return target_; }

  [[nodiscard]] Task<NotificationResult> notify(const Charge& charge, std::string_view debit_ref,
                                                std::string_view idempotency_key) override {
    return target_.notify(charge, debit_ref, idempotency_key);
  }

 private:
  NotificationPort& target_;
};

}  // namespace ic::domain
