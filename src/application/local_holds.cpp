#include "application/local_holds.hpp"

#include <algorithm>

namespace ic::application {
namespace {

// A stop request is noticed within this, and a stepped clock cannot stretch a wait past it.
constexpr Millis kLongestSlice{100};

}  // namespace

LocalHolds::Hold::Hold(LocalHolds& holds, std::string key, std::string token)
    : holds_(holds), key_(std::move(key)), token_(std::move(token)) {
  holds_.begin(key_, token_);
}

LocalHolds::Hold::~Hold() {
  if (!ended_) holds_.end(key_, token_, std::nullopt);
}

void LocalHolds::Hold::finish(LocalFinal final) {
  if (std::exchange(ended_, true)) return;
  holds_.end(key_, token_, std::move(final));
}

void LocalHolds::begin(const std::string& key, const std::string& token) {
  MutexLock lock(mutex_);
  live_.insert_or_assign(key, Live{token, std::this_thread::get_id()});
}

void LocalHolds::end(const std::string& key, const std::string& token,
                     std::optional<LocalFinal> final) {
  bool wake = false;
  {
    MutexLock lock(mutex_);
    if (auto it = live_.find(key); it != live_.end() && it->second.token == token) live_.erase(it);
    if (recent_.size() == kRecent) recent_.pop_front();
    recent_.push_back({token, std::move(final)});
    wake = waiting_ > 0;
  }
  if (wake) ended_cv_.notify_all();
}

const LocalHolds::Ended* LocalHolds::recent(std::string_view token) const {
  // Newest first: a copy looks soon after its refusal.
  const auto it = std::find_if(recent_.rbegin(), recent_.rend(),
                               [&](const Ended& e) { return e.token == token; });
  return it == recent_.rend() ? nullptr : &*it;
}

bool LocalHolds::known_here(std::string_view key, std::string_view token) const {
  MutexLock lock(mutex_);
  if (const auto it = live_.find(key); it != live_.end() && it->second.token == token) {
    return it->second.holder != std::this_thread::get_id();
  }
  return recent(token) != nullptr;
}

LocalAwait LocalHolds::await(std::string_view key, std::string_view token, Instant until,
                             const HoldWaiter* stop) {
  MutexLock lock(mutex_);
  const auto held_here = [&]() REQUIRES(mutex_) {
    const auto it = live_.find(key);
    return it != live_.end() && it->second.token == token;
  };
  if (const auto it = live_.find(key);
      it != live_.end() && it->second.holder == std::this_thread::get_id()) {
    return {.state = LocalHoldState::NotHeldHere};
  }
  if (!held_here() && recent(token) == nullptr) return {.state = LocalHoldState::NotHeldHere};
  ++waiting_;
  while (held_here()) {
    const Millis remaining = until - clock_.now();
    if (remaining <= Millis{0} || (stop != nullptr && stop->stop_requested())) {
      --waiting_;
      return {.state = LocalHoldState::StillHeld};
    }
    ended_cv_.wait_for(mutex_, std::min(remaining, kLongestSlice),
                       [&]() REQUIRES(mutex_) { return !held_here(); });
  }
  --waiting_;
  // Evicted while this copy woke (kRecent others ended meanwhile): not known, so not final.
  const Ended* ended = recent(token);
  if (ended == nullptr || !ended->final) return {.state = LocalHoldState::Released};
  return {.state = LocalHoldState::Final, .final = *ended->final};
}

}  // namespace ic::application
