// The claims this process holds right now. A copy of a charge this very process is handling
// need not go back to SQS and re-check the store later (a second or more, docs/design.md §3):
// it waits here for the holder's final write and is settled the moment that write succeeds,
// with the answer a re-check would have read. A copy that arrives while its original is held
// here asks the store nothing at all; one refused DUPLICATE_IN_PROGRESS by a record naming a
// claim of this process (its holder started meanwhile, or finished just now) waits the same way.
//
//   LocalHolds holds(clock, waiter);
//   auto hold = holds.hold(key, token, payload_hash);   // the holder, once ACQUIRED
//   hold.finish(LocalFinal{.failed = false});            // after its final write succeeded
//   auto token = holds.live_token(key, payload_hash);    // a copy, before claiming
//   auto seen = co_await holds.await(key, *token, clock.now() + lease);
#pragma once

#include <cstddef>
#include <deque>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "application/hold_waiter.hpp"
#include "core/task.hpp"
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

// Thread-safety: the loop's thread only (the service's tasks). Ownership: borrows the clock and
// the waiter, whose notify_all() wakes waiting copies when a hold ends and whose stop ends their
// waits.
class LocalHolds {
 public:
  // A holder's registration; ends (as released, unless finish() said final) when destroyed.
  class Hold {
   public:
    Hold(LocalHolds& holds, std::string key, std::string token, std::string payload_hash);
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

  LocalHolds(const Clock& clock, HoldWaiter& waiter) : clock_(clock), waiter_(waiter) {}

  [[nodiscard]] Hold hold(std::string key, std::string token, std::string payload_hash) {
    return Hold(*this, std::move(key), std::move(token), std::move(payload_hash));
  }

  // The token of the claim this process holds on `key` now, when it was taken for the same
  // payload: a copy may wait for it without claiming (another payload is the store's to judge).
  [[nodiscard]] std::optional<std::string> live_token(std::string_view key,
                                                      std::string_view payload_hash) const;

  // Whether await() has something to say about the claim (key, token): a task of this process
  // holds it now, or it ended here lately (the holder may finish between the copy's refusal and
  // its look here).
  [[nodiscard]] bool known_here(std::string_view key, std::string_view token) const;

  // Whether the claim (key, token) is this process's, and if so waits until it ends, `until`
  // passes or the waiter is stopped.
  [[nodiscard]] Task<LocalAwait> await(std::string key, std::string token, Instant until);

 private:
  void begin(const std::string& key, const std::string& token, std::string payload_hash);
  void end(const std::string& key, const std::string& token, std::optional<LocalFinal> final);
  struct Ended {
    std::string token;
    std::optional<LocalFinal> final;  // empty: released
  };
  struct Live {
    std::string token;
    std::string payload_hash;
  };
  // How the hold with this token ended, if it is among the recent ones.
  [[nodiscard]] const Ended* recent(std::string_view token) const;
  [[nodiscard]] bool held(std::string_view key, std::string_view token) const;

  const Clock& clock_;
  HoldWaiter& waiter_;
  // key -> the live hold (one per key: a claim has one holder).
  std::map<std::string, Live, std::less<>> live_;
  std::deque<Ended> recent_;  // oldest first, at most kRecent
  int waiting_ = 0;           // copies inside await()
};

}  // namespace ic::application
