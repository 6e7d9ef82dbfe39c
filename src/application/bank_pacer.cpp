#include "application/bank_pacer.hpp"

#include <exception>
#include <variant>

namespace ic::application {

BankPacer::BankPacer(domain::AccountDebitPort& bank, AimdLimit& limit, TokenBucket* bucket,
                     const Clock& clock, HoldWaiter& waiter, PacerObserver* observer)
    : bank_(bank),
      limit_(limit),
      bucket_(bucket),
      clock_(clock),
      waiter_(waiter),
      observer_(observer),
      slots_(waiter.loop()) {}

Task<domain::DebitResult> BankPacer::debit(const domain::Charge& charge,
                                           std::string_view idempotency_key) {
  const std::optional<AimdLimit::Ticket> ticket = co_await take_slot();
  if (!ticket) co_return domain::DebitUnavailable{"stopping: debit not sent"};
  report();
  if (bucket_ != nullptr) {
    for (Millis wait = bucket_->try_take(); wait > Millis{0}; wait = bucket_->try_take()) {
      const bool waited = co_await waiter_.wait_until(clock_.now() + wait);
      if (!waited) {
        give_back(*ticket, Millis{0}, false);
        co_return domain::DebitUnavailable{"stopping: debit not sent"};
      }
    }
  }
  const Instant started = clock_.now();
  domain::DebitResult result = co_await bank_.debit(charge, idempotency_key);
  give_back(*ticket, clock_.now() - started,
            std::holds_alternative<domain::DebitUnavailable>(result));
  co_return result;
}

Task<std::optional<AimdLimit::Ticket>> BankPacer::take_slot() {
  // Room the limit gained since the last release goes to those already waiting; a newcomer
  // takes a slot only when nobody waits, else it queues behind them.
  hand_out();
  if (!slots_.has_waiters()) {
    if (const std::optional<AimdLimit::Ticket> ticket = limit_.try_acquire()) co_return ticket;
  }
  watch_ramp();
  if (!co_await waiter_.wait_in(slots_)) co_return std::nullopt;
  const AimdLimit::Ticket ticket = handed_.front();
  handed_.pop_front();
  co_return ticket;
}

void BankPacer::give_back(AimdLimit::Ticket ticket, Millis latency, bool failed) {
  limit_.release(ticket, latency, failed);
  hand_out();
  report();
}

void BankPacer::hand_out() {
  // The slot is taken before the waiter runs, so none wakes to find it gone.
  while (slots_.has_waiters()) {
    const std::optional<AimdLimit::Ticket> ticket = limit_.try_acquire();
    if (!ticket) break;
    handed_.push_back(*ticket);
    slots_.notify_one();
  }
}

void BankPacer::watch_ramp() {
  if (watching_ || !limit_.next_growth()) return;
  watching_ = true;
  // Posted, so it starts once this caller waits in line.
  waiter_.loop().post(
      [this] { spawn(follow_ramp(), [this](std::exception_ptr) { watching_ = false; }); });
}

Task<void> BankPacer::follow_ramp() {
  // A ramp grows with time, not with releases: one task wakes at each of its steps for the line.
  while (slots_.has_waiters()) {
    const std::optional<Instant> growth = limit_.next_growth();
    if (!growth || !co_await waiter_.wait_until(*growth)) break;
    hand_out();
  }
}

void BankPacer::report() {
  if (observer_ != nullptr) observer_->on_bank_limit(limit_.limit(), limit_.in_flight());
}

}  // namespace ic::application
