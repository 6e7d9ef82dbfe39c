#include "event/event_loop.hpp"

#include <cxxabi.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <memory>
#include <stdexcept>
#include <string>
#include <system_error>
#include <typeinfo>

namespace ic::event {
namespace {

thread_local EventLoop* running = nullptr;

constexpr std::size_t kMaxEventsPerWait = 256;
// Below this many entries a timer heap is left alone: compacting it would cost more than it saves.
constexpr std::size_t kCompactAbove = 256;
// A timer further away than this is waited for in several waits: epoll's timeout is an int.
constexpr std::int64_t kMaxWaitMs = 60'000;

std::string errno_text(const char* what) {
  return std::string(what) + ": " + std::generic_category().message(errno);
}

std::uint64_t pack(int fd, std::uint32_t generation) {
  return (static_cast<std::uint64_t>(generation) << 32) | static_cast<std::uint32_t>(fd);
}

// A stall's "what ran": the callable's type, demangled (a lambda's names where it was written).
std::string named(std::string_view kind, const std::type_info& type) {
  int status = 0;
  std::unique_ptr<char, void (*)(void*)> readable(
      abi::__cxa_demangle(type.name(), nullptr, nullptr, &status), std::free);
  return std::string(kind) + " " + (status == 0 && readable ? readable.get() : type.name());
}

std::string coroutine_named(std::string_view message_id) {
  if (message_id.empty()) return "coroutine";
  return "coroutine of message " + std::string(message_id);
}

// What names a coroutine in a stall report, copied before it runs: a task that finishes frees
// its frame, and its locals with it. A fixed buffer, so the hot path allocates nothing (SQS
// message ids are 36 characters; a longer one is cut).
class CoroutineName {
 public:
  explicit CoroutineName(const TaskLocals* locals) {
    if (locals == nullptr) return;
    length_ = std::min(locals->message_id.size(), buffer_.size());
    std::memcpy(buffer_.data(), locals->message_id.data(), length_);
  }
  [[nodiscard]] std::string_view view() const { return {buffer_.data(), length_}; }

 private:
  std::array<char, 64> buffer_{};
  std::size_t length_ = 0;
};

}  // namespace

class EventLoop::CurrentScope {
 public:
  explicit CurrentScope(EventLoop* loop) : outer_(std::exchange(running, loop)) {}
  ~CurrentScope() { running = outer_; }
  CurrentScope(const CurrentScope&) = delete;
  CurrentScope& operator=(const CurrentScope&) = delete;

 private:
  EventLoop* outer_;
};

EventLoop::EventLoop(const MonotonicClock& clock) : clock_(clock) {
  epoll_fd_ = epoll_create1(EPOLL_CLOEXEC);
  if (epoll_fd_ < 0) throw std::runtime_error(errno_text("epoll_create1"));
  wake_fd_ = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
  if (wake_fd_ < 0) {
    const std::string reason = errno_text("eventfd");
    close(epoll_fd_);
    throw std::runtime_error(reason);
  }
  epoll_event event{};
  event.events = EPOLLIN;
  event.data.u64 = pack(wake_fd_, 0);
  if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, wake_fd_, &event) != 0) {
    const std::string reason = errno_text("epoll_ctl");
    close(wake_fd_);
    close(epoll_fd_);
    throw std::runtime_error(reason);
  }
}

EventLoop::~EventLoop() {
  {
    // Attachments may unwatch descriptors and cancel timers as they go.
    const CurrentScope scope(this);
    while (!attachments_.empty()) attachments_.pop_back();
  }
  close(wake_fd_);
  close(epoll_fd_);
}

EventLoop* EventLoop::current() noexcept {
  return running;
}

void EventLoop::run_until(const std::function<bool()>& done) {
  const CurrentScope scope(this);
  start_turns();
  while (true) {
    while (run_pending()) {
      if (done()) return;
    }
    if (done()) return;
    wait_for_events(timeout_until_next_timer());
  }
}

bool EventLoop::run_ready() {
  const CurrentScope scope(this);
  start_turns();
  bool ran = false;
  while (run_pending() || wait_for_events(0)) ran = true;
  return ran;
}

bool EventLoop::run_pending() {
  bool ran = run_posted();
  ran = run_resumed() || ran;
  ran = run_due_timers() || ran;
  return ran;
}

void EventLoop::post(std::function<void()> work) {
  {
    MutexLock lock(posted_mutex_);
    posted_.push_back(std::move(work));
  }
  const std::uint64_t one = 1;
  // A full counter (never, in practice) still leaves the loop readable: nothing is lost.
  [[maybe_unused]] const auto written = write(wake_fd_, &one, sizeof one);
}

void EventLoop::resume_soon(Resumable resumable) {
  resumed_.push_back(resumable);
}

EventLoop::TimerId EventLoop::add_timer(SteadyInstant due, std::function<void()> on_due) {
  const TimerId id = next_timer_++;
  timers_.emplace(id, std::move(on_due));
  timer_queue_.push_back({due, id});
  std::push_heap(timer_queue_.begin(), timer_queue_.end(), std::greater<>{});
  return id;
}

bool EventLoop::cancel_timer(TimerId id) noexcept {
  if (timers_.erase(id) == 0) return false;
  if (timer_queue_.size() > kCompactAbove && timer_queue_.size() > 2 * timers_.size()) {
    std::erase_if(timer_queue_, [this](const Timer& timer) { return !timers_.contains(timer.id); });
    std::make_heap(timer_queue_.begin(), timer_queue_.end(), std::greater<>{});
  }
  return true;
}

std::expected<void, std::string> EventLoop::watch(int fd, std::uint32_t events,
                                                  FdHandler& handler) {
  auto existing = watches_.find(fd);
  const bool known = existing != watches_.end();
  std::uint32_t generation = known ? existing->second.generation : next_generation_++;
  epoll_event event{};
  event.events = events;
  event.data.u64 = pack(fd, generation);
  if (epoll_ctl(epoll_fd_, known ? EPOLL_CTL_MOD : EPOLL_CTL_ADD, fd, &event) != 0) {
    // Closed without unwatch(), a descriptor left the set by itself, and its number now names
    // another one: that one is added as new.
    if (!known || errno != ENOENT) return std::unexpected(errno_text("epoll_ctl"));
    generation = next_generation_++;
    event.data.u64 = pack(fd, generation);
    if (epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &event) != 0) {
      return std::unexpected(errno_text("epoll_ctl"));
    }
  }
  watches_[fd] = Watch{.generation = generation, .handler = &handler};
  return {};
}

void EventLoop::unwatch(int fd) noexcept {
  if (watches_.erase(fd) == 0) return;
  // A descriptor already closed has left the epoll set by itself (EBADF/ENOENT then).
  epoll_ctl(epoll_fd_, EPOLL_CTL_DEL, fd, nullptr);
}

bool EventLoop::run_posted() {
  std::vector<std::function<void()>> work;
  {
    MutexLock lock(posted_mutex_);
    work.swap(posted_);
  }
  for (auto& item : work) {
    item();
    end_turn([&] { return named("posted", item.target_type()); });
  }
  return !work.empty();
}

bool EventLoop::run_resumed() {
  // Only those resumed before this pass: a coroutine that keeps waking another cannot starve
  // the timers and descriptors.
  const std::size_t count = resumed_.size();
  for (std::size_t i = 0; i < count; ++i) {
    const Resumable next = resumed_.front();
    resumed_.pop_front();
    const CoroutineName name(observer_ != nullptr ? next.locals() : nullptr);
    next.resume();
    end_turn([&] { return coroutine_named(name.view()); });
  }
  return count > 0;
}

bool EventLoop::run_due_timers() {
  bool ran = false;
  const SteadyInstant now = clock_.now();
  // Timers added by a callback run in a later pass, even when already due.
  const TimerId newest = next_timer_;
  while (!timer_queue_.empty() && timer_queue_.front().due <= now &&
         timer_queue_.front().id < newest) {
    const TimerId id = timer_queue_.front().id;
    std::pop_heap(timer_queue_.begin(), timer_queue_.end(), std::greater<>{});
    timer_queue_.pop_back();
    auto found = timers_.find(id);
    if (found == timers_.end()) continue;  // cancelled
    auto on_due = std::move(found->second);
    timers_.erase(found);
    on_due();
    end_turn([&] { return named("timer", on_due.target_type()); });
    ran = true;
  }
  return ran;
}

int EventLoop::timeout_until_next_timer() {
  if (!resumed_.empty()) return 0;
  // A cancelled timer on top would only wake the loop for nothing.
  while (!timer_queue_.empty() && !timers_.contains(timer_queue_.front().id)) {
    std::pop_heap(timer_queue_.begin(), timer_queue_.end(), std::greater<>{});
    timer_queue_.pop_back();
  }
  if (timer_queue_.empty()) return static_cast<int>(kMaxWaitMs);
  const auto left = timer_queue_.front().due - clock_.now();
  if (left <= SteadyInstant::duration::zero()) return 0;
  const auto ms = std::chrono::ceil<Millis>(left).count();
  return static_cast<int>(std::min<std::int64_t>(ms, kMaxWaitMs));
}

bool EventLoop::wait_for_events(int timeout_ms) {
  std::array<epoll_event, kMaxEventsPerWait> events{};
  const int ready =
      epoll_wait(epoll_fd_, events.data(), static_cast<int>(events.size()), timeout_ms);
  if (timeout_ms != 0) start_turns();  // the wait was no turn
  if (ready <= 0) return false;        // a timeout, or EINTR: the caller looks again
  bool ran = false;
  for (int i = 0; i < ready; ++i) {
    const std::uint64_t data = events[static_cast<std::size_t>(i)].data.u64;
    const int fd = static_cast<int>(data & 0xFFFFFFFFU);
    if (fd == wake_fd_) {
      drain_wake_fd();
      ran = true;
      continue;
    }
    const auto watched = watches_.find(fd);
    // Unwatched, or watched anew since epoll reported it: the report is stale.
    if (watched == watches_.end() || watched->second.generation != (data >> 32)) continue;
    FdHandler& handler = *watched->second.handler;
    // Taken before the call: the handler may unwatch and destroy itself.
    const std::type_info& type = typeid(handler);
    handler.on_ready(fd, events[static_cast<std::size_t>(i)].events);
    end_turn([&] { return named("descriptor " + std::to_string(fd), type); });
    ran = true;
  }
  return ran;
}

void EventLoop::drain_wake_fd() const {
  std::uint64_t count = 0;
  [[maybe_unused]] const auto read_bytes = read(wake_fd_, &count, sizeof count);
}

}  // namespace ic::event
