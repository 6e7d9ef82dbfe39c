#include "consumer/ack_batcher.hpp"

#include <algorithm>

#include "core/thread_guard.hpp"

namespace ic::consumer {

namespace {

[[nodiscard]] Task<QueuePort::BatchReply> call(QueuePort& queue,
                                               std::span<const DeleteEntry> entries) {
  return queue.delete_batch(entries);
}

[[nodiscard]] Task<QueuePort::BatchReply> call(QueuePort& queue,
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

}  // namespace

AckBatcher::AckBatcher(event::EventLoop& loop, QueuePort& queue, ListenerObserver& observer,
                       Millis flush_interval)
    : loop_(loop),
      queue_(queue),
      observer_(observer),
      flush_interval_(flush_interval),
      idle_(loop) {}

void AckBatcher::add_delete(DeleteEntry entry) {
  add(deletes_, BatchAction::Delete, std::move(entry));
}

void AckBatcher::add_visibility(VisibilityEntry entry) {
  add(visibility_, BatchAction::ChangeVisibility, std::move(entry));
}

template <class Entry>
void AckBatcher::add(Buffer<Entry>& buffer, BatchAction action, Entry entry) {
  buffer.pending.push_back({std::move(entry), loop_.now()});
  if (stopping_ || buffer.pending.size() >= kMaxBatchEntries) {
    flush_one(buffer, action);
  } else if (!buffer.timer) {
    arm(buffer, action);
  }
}

template <class Entry>
void AckBatcher::flush_one(Buffer<Entry>& buffer, BatchAction action) {
  if (buffer.timer) {
    loop_.cancel_timer(*buffer.timer);
    buffer.timer.reset();
  }
  std::vector<Entry> batch;
  const auto n = std::min(buffer.pending.size(), kMaxBatchEntries);
  for (std::size_t i = 0; i < n; ++i) {
    batch.push_back(std::move(buffer.pending.front().entry));
    buffer.pending.pop_front();
  }
  if (!batch.empty()) start_send(action, std::move(batch));
  if (!buffer.pending.empty()) arm(buffer, action);
}

template <class Entry>
void AckBatcher::arm(Buffer<Entry>& buffer, BatchAction action) {
  buffer.timer =
      loop_.add_timer(buffer.pending.front().added + flush_interval_, [this, &buffer, action] {
        buffer.timer.reset();
        flush_one(buffer, action);
      });
}

Task<void> AckBatcher::stop() {
  stopping_ = true;
  while (!deletes_.pending.empty()) flush_one(deletes_, BatchAction::Delete);
  while (!visibility_.pending.empty()) flush_one(visibility_, BatchAction::ChangeVisibility);
  while (sending_ > 0) co_await idle_.wait();
}

template <class Entry>
void AckBatcher::start_send(BatchAction action, std::vector<Entry> entries) {
  ++sending_;
  // A batch lost to an exception only means redeliveries, which the claim absorbs.
  spawn(send(action, std::move(entries)), [this](std::exception_ptr error) {
    report_failure("ack-batcher", &observer_, error);
    --sending_;
    idle_.notify_all();
  });
}

template <class Entry>
Task<void> AckBatcher::send(BatchAction action, std::vector<Entry> entries) {
  // Two rounds: the batch, then once more with the entries that failed retryably.
  for (int round = 0; round < 2 && !entries.empty(); ++round) {
    const bool last_round = round == 1;
    observer_.on_batch_sent(action, entries.size());
    auto reply = co_await call(queue_, std::span<const Entry>(entries));
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
