// The claims this process holds right now. A copy of a charge refused DUPLICATE_IN_PROGRESS
// because a worker of this very process holds it need not go back to SQS and re-check the store
// later (a second or more, docs/design.md §3): it waits here for the holder's final write and
// is settled the moment that write succeeds, with the answer a re-check would have read.
//
//   LocalHolds holds(clock);
//   auto hold = holds.hold(key, token);              // the holder, once ACQUIRED
//   hold.finish(LocalFinal{.failed = false});        // after its final write succeeded
//   auto seen = holds.await(key, record.claim_token, clock.now() + lease, waiter);  // a copy
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "application/hold_waiter.hpp"
#include "core/thread_annotations.hpp"
#include "core/time.hpp"

namespace ic::application {

// What the holder's final write recorded.
struct LocalFinal {
  bool failed = false;         // FAILED (a permanent debit refusal); DONE otherwise
  std::string failure_reason;  // the record's failureReason when failed
};

// What a copy learns from await().
enum class LocalHoldState {
  NotHeldHere,  // another process holds the claim (or it ended here too long ago to know)
  StillHeld,    // held here and still running at the deadline, or the process is stopping
  Released,     // held here, ended without a final write: the claim is free again
  Final,        // held here, and its final write succeeded
};

struct LocalAwait {
  LocalHoldState state = LocalHoldState::NotHeldHere;
  LocalFinal final;  // when state is Final
};

// Thread-safety: every member may be called from any thread. Ownership: borrows the clock.
class LocalHolds {
 public:
  // A holder's registration; ends (as released, unless finish() said final) when destroyed.
  class Hold {
   public:
    Hold(LocalHolds& holds, std::string key, std::string token);
    Hold(const Hold&) = delete;
    Hold& operator=(const Hold&) = delete;
    ~Hold();
    // The final write succeeded: waiting copies settle with `final`.
    void finish(LocalFinal final);

   private:
    LocalHolds& holds_;
    std::string key_;
    std::string token_;
    bool ended_ = false;
  };

  // How the last kRecent holds ended is kept, so a copy refused just before its holder ended
  // still finds the answer.
  static constexpr std::size_t kRecent = 1024;

  explicit LocalHolds(const Clock& clock) : clock_(clock) {}

  [[nodiscard]] Hold hold(std::string key, std::string token) {
    return Hold(*this, std::move(key), std::move(token));
  }

  // Whether await() has something to say about the claim (key, token): another thread of this
  // process holds it now, or it ended here lately (the holder may finish between the copy's
  // refusal and its look here).
  [[nodiscard]] bool known_here(std::string_view key, std::string_view token) const;

  // Whether the claim (key, token) is this process's, and if so waits until it ends, `until`
  // passes or `stop` is asked to stop (checked every 100 ms). A hold of the calling thread
  // itself counts as not held here: waiting for it could never end.
  [[nodiscard]] LocalAwait await(std::string_view key, std::string_view token, Instant until,
                                 const HoldWaiter* stop);

 private:
  void begin(const std::string& key, const std::string& token);
  void end(const std::string& key, const std::string& token, std::optional<LocalFinal> final);
  struct Ended {
    std::string token;
    std::optional<LocalFinal> final;  // empty: released
  };
  // How the hold with this token ended, if it is among the recent ones.
  [[nodiscard]] const Ended* recent(std::string_view token) const REQUIRES(mutex_);

  const Clock& clock_;
  mutable Mutex mutex_;
  CondVar ended_cv_;
  struct Live {
    std::string token;
    std::thread::id holder;
  };
  // key -> the live hold (one per key: a claim has one holder).
  std::map<std::string, Live, std::less<>> live_ GUARDED_BY(mutex_);
  std::deque<Ended> recent_ GUARDED_BY(mutex_);  // oldest first, at most kRecent
  int waiting_ GUARDED_BY(mutex_) = 0;           // copies inside await()
};

}  // namespace ic::application
