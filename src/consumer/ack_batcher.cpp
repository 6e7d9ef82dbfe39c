#include "consumer/ack_batcher.hpp"

#include <algorithm>
#include <stdexcept>

#include "core/thread_guard.hpp"

namespace ic::consumer {

namespace {

[[nodiscard]] std::expected<BatchResult, Error> call(QueuePort& queue,
                                                     std::span<const DeleteEntry> entries) {
  return queue.delete_batch(entries);
}

[[nodiscard]] std::expected<BatchResult, Error> call(QueuePort& queue,
                                                     std::span<const VisibilityEntry> entries) {
  return queue.change_visibility_batch(entries);
}

// A reply that does not answer every entry breaks the port's contract; the unanswered entries
// count as failed so that nothing is silently taken for done.
[[nodiscard]] EntryResult answer_at(const BatchResult& reply, std::size_t i) {
  if (i < reply.size()) return reply[i];
  return std::unexpected(Error{.error_class = ErrorClass::Retryable,
                               .code = "MissingBatchEntry",
                               .message = "batch reply did not answer this entry"});
}

// A first entry sets the flusher's deadline and a tenth makes a batch; any other entry changes
// nothing the flusher waits for, and waking it for every ack was a context switch per message.
[[nodiscard]] bool wakes_flusher(std::size_t buffered) {
  return buffered == 1 || buffered == kMaxBatchEntries;
}

}  // namespace

AckBatcher::AckBatcher(QueuePort& queue, ListenerObserver& observer, Millis flush_interval)
    : queue_(queue), observer_(observer), flush_interval_(flush_interval) {}

AckBatcher::~AckBatcher() {
  stop();
}

void AckBatcher::start() {
  thread_ = std::thread([this] { run(); });
}

void AckBatcher::add_delete(DeleteEntry entry) {
  {
    MutexLock lock(mutex_);
    if (stopping_) throw std::logic_error("AckBatcher::add_delete after stop");
    deletes_.push_back({std::move(entry), SteadyClock::now()});
    if (!wakes_flusher(deletes_.size())) return;
  }
  wake_.notify_one();
}

void AckBatcher::add_visibility(VisibilityEntry entry) {
  {
    MutexLock lock(mutex_);
    if (stopping_) throw std::logic_error("AckBatcher::add_visibility after stop");
    visibility_.push_back({std::move(entry), SteadyClock::now()});
    if (!wakes_flusher(visibility_.size())) return;
  }
  wake_.notify_one();
}

void AckBatcher::stop() {
  {
    MutexLock lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

template <class Entry>
std::vector<Entry> AckBatcher::take_ready(std::deque<Pending<Entry>>& buffer,
                                          SteadyClock::time_point now) {
  std::vector<Entry> batch;
  if (buffer.empty()) return batch;
  const bool ready = stopping_ || buffer.size() >= kMaxBatchEntries ||
                     now >= buffer.front().added + flush_interval_;
  if (!ready) return batch;
  const auto n = std::min(buffer.size(), kMaxBatchEntries);
  for (std::size_t i = 0; i < n; ++i) {
    batch.push_back(std::move(buffer.front().entry));
    buffer.pop_front();
  }
  return batch;
}

void AckBatcher::run() {
  MutexLock lock(mutex_);
  while (true) {
    const auto now = SteadyClock::now();
    auto deletes = take_ready(deletes_, now);
    auto visibility = take_ready(visibility_, now);
    if (!deletes.empty() || !visibility.empty()) {
      lock.unlock();
      // A batch lost to an exception only means redeliveries, which the claim absorbs; the
      // flushing thread must go on, or every later ack would be lost with it.
      run_guarded("ack-batcher", &observer_, [&] {
        if (!deletes.empty()) send(BatchAction::Delete, std::move(deletes));
      });
      run_guarded("ack-batcher", &observer_, [&] {
        if (!visibility.empty()) send(BatchAction::ChangeVisibility, std::move(visibility));
      });
      lock.lock();
      continue;
    }
    if (stopping_) return;  // both buffers are empty: take_ready drains everything on stop
    auto deadline = SteadyClock::time_point::max();
    if (!deletes_.empty()) deadline = deletes_.front().added + flush_interval_;
    if (!visibility_.empty()) {
      deadline = std::min(deadline, visibility_.front().added + flush_interval_);
    }
    if (deadline == SteadyClock::time_point::max()) {
      wake_.wait(mutex_);
    } else {
      wake_.wait_until(mutex_, deadline);
    }
  }
}

template <class Entry>
void AckBatcher::send(BatchAction action, std::vector<Entry> entries) {
  // Two rounds: the batch, then once more with the entries that failed retryably.
  for (int round = 0; round < 2 && !entries.empty(); ++round) {
    const bool last_round = round == 1;
    observer_.on_batch_sent(action, entries.size());
    auto reply = call(queue_, std::span<const Entry>(entries));
    std::vector<Entry> again;
    for (std::size_t i = 0; i < entries.size(); ++i) {
      const EntryResult result = reply ? answer_at(*reply, i) : std::unexpected(reply.error());
      if (result) continue;
      const bool retry = !last_round && result.error().retryable();
      observer_.on_batch_entry_failed(action, entries[i].message_id, result.error(), !retry);
      if (retry) again.push_back(std::move(entries[i]));
    }
    entries = std::move(again);
  }
}

}  // namespace ic::consumer
