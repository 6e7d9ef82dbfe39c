#include "event/wait_queue.hpp"

namespace ic::event {

WaitQueue::Awaiter WaitQueue::wait(std::optional<SteadyInstant> deadline, std::stop_token stop) {
  return Awaiter(*this, deadline, std::move(stop));
}

bool WaitQueue::notify_one() {
  if (head_ == nullptr) return false;
  head_->finish(Wake::Notified);
  return true;
}

void WaitQueue::notify_all() {
  while (head_ != nullptr) head_->finish(Wake::Notified);
}

void WaitQueue::link(Awaiter& waiter) {
  waiter.previous_ = tail_;
  waiter.next_ = nullptr;
  if (tail_ != nullptr) {
    tail_->next_ = &waiter;
  } else {
    head_ = &waiter;
  }
  tail_ = &waiter;
  waiter.linked_ = true;
}

void WaitQueue::unlink(Awaiter& waiter) {
  if (!waiter.linked_) return;
  (waiter.previous_ != nullptr ? waiter.previous_->next_ : head_) = waiter.next_;
  (waiter.next_ != nullptr ? waiter.next_->previous_ : tail_) = waiter.previous_;
  waiter.previous_ = waiter.next_ = nullptr;
  waiter.linked_ = false;
}

WaitQueue::Awaiter::~Awaiter() {
  queue_.unlink(*this);
  if (timer_) queue_.loop().cancel_timer(*timer_);
}

bool WaitQueue::Awaiter::await_ready() {
  if (stop_.stop_requested()) {
    result_ = Wake::Stopped;
    return true;
  }
  if (deadline_ && *deadline_ <= queue_.loop().now()) {
    result_ = Wake::TimedOut;
    return true;
  }
  return false;
}

void WaitQueue::Awaiter::await_suspend(std::coroutine_handle<> handle) {
  resumable_ = Resumable::capture(handle);
  queue_.link(*this);
  if (deadline_) {
    timer_ = queue_.loop().add_timer(*deadline_, [this] {
      timer_.reset();
      finish(Wake::TimedOut);
    });
  }
  // Constructed last: a stop requested meanwhile runs finish() here, which is complete by now.
  if (stop_.stop_possible()) on_stop_.emplace(stop_, OnStop{this});
}

Wake WaitQueue::Awaiter::await_resume() {
  on_stop_.reset();
  return result_;
}

void WaitQueue::Awaiter::finish(Wake why) {
  if (finished_) return;
  finished_ = true;
  result_ = why;
  queue_.unlink(*this);
  if (timer_) {
    queue_.loop().cancel_timer(*timer_);
    timer_.reset();
  }
  queue_.loop().resume_soon(resumable_);
}

Task<bool> sleep_until(EventLoop& loop, SteadyInstant due, std::stop_token stop) {
  WaitQueue nobody_notifies(loop);
  const Wake wake = co_await nobody_notifies.wait(due, std::move(stop));
  co_return wake == Wake::TimedOut;
}

Task<bool> sleep_for(EventLoop& loop, Millis delay, std::stop_token stop) {
  return sleep_until(loop, loop.now() + delay, std::move(stop));
}

namespace {

class CurrentLoopSleeper final : public AsyncSleeper {
 public:
  Task<bool> sleep_for(Millis delay, std::stop_token stop) override {
    EventLoop* loop = EventLoop::current();
    if (loop == nullptr) co_return false;  // no loop, no task to wait in: nothing to do
    const bool slept = co_await event::sleep_for(*loop, delay, std::move(stop));
    co_return slept;
  }
};

}  // namespace

AsyncSleeper& loop_sleeper() {
  static CurrentLoopSleeper sleeper;
  return sleeper;
}

Task<bool> Semaphore::acquire(std::stop_token stop) {
  while (available_ == 0) {
    const Wake wake = co_await waiters_.wait(std::nullopt, stop);
    if (wake == Wake::Stopped) co_return false;
  }
  --available_;
  co_return true;
}

bool Semaphore::try_acquire() {
  if (available_ == 0) return false;
  --available_;
  return true;
}

void Semaphore::release() {
  ++available_;
  waiters_.notify_one();
}

}  // namespace ic::event
