// Buffers deletes and visibility changes and sends them as SQS batch calls: a batch leaves
// when it holds kMaxBatchEntries entries or when its oldest entry has waited flush_interval.
// Every failed entry of a reply is reported; retryable ones are sent once more, and what still
// fails is reported as final (a lost delete only means a redelivery, which the claim absorbs).
#pragma once

#include <chrono>
#include <deque>
#include <thread>
#include <vector>

#include "consumer/listener_observer.hpp"
#include "consumer/queue_port.hpp"
#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic::consumer {

// Thread-safety: add_* may be called concurrently from any thread between start() and stop().
// Ownership: `queue` and `observer` must outlive the batcher.
class AckBatcher {
 public:
  AckBatcher(QueuePort& queue, ListenerObserver& observer, Millis flush_interval);
  ~AckBatcher();
  AckBatcher(const AckBatcher&) = delete;
  AckBatcher& operator=(const AckBatcher&) = delete;

  void start();
  void add_delete(DeleteEntry entry);
  void add_visibility(VisibilityEntry entry);
  // Sends everything still buffered, then joins the flushing thread. Idempotent.
  void stop();

 private:
  using SteadyClock = std::chrono::steady_clock;
  template <class Entry>
  struct Pending {
    Entry entry;
    SteadyClock::time_point added;
  };

  void run();
  // Takes one batch from `buffer` if it is full, due, or we are stopping.
  template <class Entry>
  std::vector<Entry> take_ready(std::deque<Pending<Entry>>& buffer, SteadyClock::time_point now)
      REQUIRES(mutex_);
  template <class Entry>
  void send(BatchAction action, std::vector<Entry> entries);

  QueuePort& queue_;
  ListenerObserver& observer_;
  const Millis flush_interval_;

  Mutex mutex_;
  CondVar wake_;
  std::deque<Pending<DeleteEntry>> deletes_ GUARDED_BY(mutex_);
  std::deque<Pending<VisibilityEntry>> visibility_ GUARDED_BY(mutex_);
  bool stopping_ GUARDED_BY(mutex_) = false;
  std::thread thread_;
};

}  // namespace ic::consumer
