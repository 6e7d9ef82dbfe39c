// Buffers deletes and visibility changes and sends them as SQS batch calls: a batch leaves
// when it holds kMaxBatchEntries entries or when its oldest entry has waited flush_interval.
// Every failed entry of a reply is reported; retryable ones are sent once more, and what still
// fails is reported as final (a lost delete only means a redelivery, which the claim absorbs).
// Batches are tasks on the container's loop, several in flight at once under load.
#pragma once

#include <deque>
#include <optional>
#include <vector>

#include "consumer/listener_observer.hpp"
#include "consumer/queue_port.hpp"
#include "core/time.hpp"
#include "event/wait_queue.hpp"

namespace ic::consumer {

// Thread-safety: the loop's thread only. Ownership: the loop, queue and observer must outlive
// the batcher, which must not be destroyed before stop() has finished.
class AckBatcher {
 public:
  AckBatcher(event::EventLoop& loop, QueuePort& queue, ListenerObserver& observer,
             Millis flush_interval);
  AckBatcher(const AckBatcher&) = delete;
  AckBatcher& operator=(const AckBatcher&) = delete;

  void add_delete(DeleteEntry entry);
  void add_visibility(VisibilityEntry entry);
  // Sends everything still buffered and finishes once no batch is in flight. Entries added
  // after it began are sent at once, one batch each.
  [[nodiscard]] Task<void> stop();

 private:
  template <class Entry>
  struct Buffer {
    struct Pending {
      Entry entry;
      SteadyInstant added;
    };
    std::deque<Pending> pending;
    std::optional<event::EventLoop::TimerId> timer;
  };

  template <class Entry>
  void add(Buffer<Entry>& buffer, BatchAction action, Entry entry);
  // Sends one batch of the oldest entries, then sets the timer for what remains.
  template <class Entry>
  void flush_one(Buffer<Entry>& buffer, BatchAction action);
  template <class Entry>
  void arm(Buffer<Entry>& buffer, BatchAction action);
  template <class Entry>
  Task<void> send(BatchAction action, std::vector<Entry> entries);
  template <class Entry>
  void start_send(BatchAction action, std::vector<Entry> entries);

  event::EventLoop& loop_;
  QueuePort& queue_;
  ListenerObserver& observer_;
  const Millis flush_interval_;
  Buffer<DeleteEntry> deletes_;
  Buffer<VisibilityEntry> visibility_;
  bool stopping_ = false;
  int sending_ = 0;  // batch tasks not finished
  event::WaitQueue idle_;
};

}  // namespace ic::consumer
