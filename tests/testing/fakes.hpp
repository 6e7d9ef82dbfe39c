// Plain in-memory fakes of the domain's ports and the lease heartbeat (ic_testing_ports), shared
// by the unit, concurrency, property and model-regression tests. Each is thread-safe because the
// concurrency tests share them.
#pragma once

#include <atomic>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "consumer/lease_heartbeat.hpp"
#include "core/thread_annotations.hpp"
#include "core/time.hpp"
#include "domain/charge.hpp"
#include "domain/ports.hpp"
#include "testing/clocks.hpp"

namespace ic::testing {

using namespace std::chrono_literals;

class SequentialTokens final : public domain::TokenSource {
 public:
  std::string next() override { return "token-" + std::to_string(++counter_); }

 private:
  std::atomic<int> counter_{0};
};

// Behaves like the bank's contract: one debit per idempotency key, a replay answers with the
// original debitId; every call is counted so tests can prove how often money moved.
// debit() completes at once, without suspending.
class FakeBank final : public domain::AccountDebitPort {
 public:
  Task<domain::DebitResult> debit(const domain::Charge& charge, std::string_view key) override {
    co_return answer(charge, key);
  }

  // The next debits of `charge_id` answer with these results, in order, before the default.
  void script(const std::string& charge_id, std::vector<domain::DebitResult> results) {
    MutexLock lock(mutex_);
    scripted_[charge_id] = std::move(results);
  }
  int calls() const {
    MutexLock lock(mutex_);
    return calls_;
  }
  int calls_for(const std::string& key) const {
    MutexLock lock(mutex_);
    auto it = calls_by_key_.find(key);
    return it == calls_by_key_.end() ? 0 : it->second;
  }
  // Every debit that moved money, those of forgotten keys included.
  std::size_t money_movements() const {
    MutexLock lock(mutex_);
    return debits_.size() + forgotten_;
  }

  // The bank forgets the key (its idempotency window passed): a debit with it moves money again.
  void forget(const std::string& key) {
    MutexLock lock(mutex_);
    if (debits_.erase(key) > 0) ++forgotten_;
  }

  // Runs inside debit() before the bank answers: lets a test act "during" the debit.
  std::function<void(const domain::Charge&)> before_debit;

 private:
  domain::DebitResult answer(const domain::Charge& charge, std::string_view key) {
    if (before_debit) before_debit(charge);
    MutexLock lock(mutex_);
    ++calls_;
    calls_by_key_[std::string(key)] += 1;
    if (auto it = scripted_.find(charge.id.value()); it != scripted_.end() && !it->second.empty()) {
      domain::DebitResult next = it->second.front();
      it->second.erase(it->second.begin());
      if (!std::holds_alternative<domain::Debited>(next)) return next;
    }
    auto [it, inserted] = debits_.try_emplace(std::string(key), "DBT-" + std::string(key));
    return domain::Debited{it->second, !inserted};
  }

  mutable Mutex mutex_;
  int calls_ GUARDED_BY(mutex_) = 0;
  std::map<std::string, int> calls_by_key_ GUARDED_BY(mutex_);
  std::map<std::string, std::string> debits_ GUARDED_BY(mutex_);
  std::size_t forgotten_ GUARDED_BY(mutex_) = 0;
  std::map<std::string, std::vector<domain::DebitResult>> scripted_ GUARDED_BY(mutex_);
};

// notify() completes at once, without suspending.
class FakeNotifier final : public domain::NotificationPort {
 public:
  Task<domain::NotificationResult> notify(const domain::Charge&, std::string_view,
                                          std::string_view key) override {
    co_return answer(key);
  }
  void fail_all() {
    MutexLock lock(mutex_);
    failing_ = true;
  }
  std::vector<std::string> keys() const {
    MutexLock lock(mutex_);
    return keys_;
  }

 private:
  domain::NotificationResult answer(std::string_view key) {
    MutexLock lock(mutex_);
    keys_.emplace_back(key);
    if (failing_) return domain::NotificationFailed{"gateway down"};
    return domain::NotificationSent{};
  }

  mutable Mutex mutex_;
  bool failing_ GUARDED_BY(mutex_) = false;
  std::vector<std::string> keys_ GUARDED_BY(mutex_);
};

// For handlers whose effects are shorter than half a lease.
class NoHeartbeat final : public consumer::LeaseHeartbeat {
 public:
  void start(std::function<Task<consumer::ClaimExtension>()>, Millis) override {}
  Task<void> stop() override { co_return; }
};

// Records the heartbeat calls and lets a test fire the extension by hand (fire() is a task:
// await it, or run_blocking it outside a task).
class RecordingHeartbeat final : public consumer::LeaseHeartbeat {
 public:
  void start(std::function<Task<consumer::ClaimExtension>()> extend_claim, Millis lease) override {
    extend_ = std::move(extend_claim);
    lease_ = lease;
    ++starts;
  }
  Task<void> stop() override {
    extend_ = nullptr;
    ++stops;
    co_return;
  }
  // Lost when no heartbeat runs, like a timer that was stopped.
  Task<consumer::ClaimExtension> fire() {
    if (!extend_) co_return consumer::ClaimExtension::Lost;
    co_return co_await extend_();
  }
  bool running() const { return static_cast<bool>(extend_); }

  int starts = 0;
  int stops = 0;

 private:
  std::function<Task<consumer::ClaimExtension>()> extend_;
  Millis lease_{};
};

// A valid charge for tests; vary the id and amount as needed.
inline domain::Charge make_charge(const std::string& id = "CHG-20261130-000123",
                                  std::int64_t amount_minor = 2500,
                                  const std::string& account = "ACC-0012345678") {
  return domain::Charge{*domain::ChargeId::parse(id), *domain::AccountId::parse(account),
                        *domain::ChargeType::parse("SMS_ALERT_FEE"),
                        *domain::Money::of(amount_minor, *domain::Currency::parse("INR")),
                        *domain::DueDate::parse("2026-11-30")};
}

}  // namespace ic::testing
