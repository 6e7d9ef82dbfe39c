#include "application/bank_pacer.hpp"

#include <variant>

namespace ic::application {
namespace {

// A waiter for a slot is woken by each release; the slice bounds the wait when a ramp (which
// grows with time, not with releases) is what holds it back.
constexpr Millis kSlotSlice{20};

}  // namespace

BankPacer::BankPacer(domain::AccountDebitPort& bank, AimdLimit& limit, TokenBucket* bucket,
                     const Clock& clock, HoldWaiter& waiter, PacerObserver* observer)
    : bank_(bank),
      limit_(limit),
      bucket_(bucket),
      clock_(clock),
      waiter_(waiter),
      observer_(observer) {}

Task<domain::DebitResult> BankPacer::debit(const domain::Charge& charge,
                                           std::string_view idempotency_key) {
  while (!limit_.try_acquire()) {
    const bool waited = co_await waiter_.wait_until(clock_.now() + kSlotSlice);
    if (!waited) co_return domain::DebitUnavailable{"stopping: debit not sent"};
  }
  report();
  if (bucket_ != nullptr) {
    for (Millis wait = bucket_->try_take(); wait > Millis{0}; wait = bucket_->try_take()) {
      const bool waited = co_await waiter_.wait_until(clock_.now() + wait);
      if (!waited) {
        limit_.release(Millis{0}, false);
        waiter_.notify_all();
        report();
        co_return domain::DebitUnavailable{"stopping: debit not sent"};
      }
    }
  }
  const Instant started = clock_.now();
  domain::DebitResult result = co_await bank_.debit(charge, idempotency_key);
  const bool failed = std::holds_alternative<domain::DebitUnavailable>(result);
  limit_.release(clock_.now() - started, failed);
  waiter_.notify_all();
  report();
  co_return result;
}

void BankPacer::report() {
  if (observer_ != nullptr) observer_->on_bank_limit(limit_.limit(), limit_.in_flight());
}

}  // namespace ic::application
