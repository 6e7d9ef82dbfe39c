#include "application/local_holds.hpp"

#include <algorithm>

namespace ic::application {

LocalHolds::Hold::Hold(LocalHolds& holds, std::string key, std::string token,
                       std::string payload_hash)
    : holds_(holds), key_(std::move(key)), token_(std::move(token)) {
  holds_.begin(key_, token_, std::move(payload_hash));
}

LocalHolds::Hold::~Hold() {
  if (!ended_) holds_.end(key_, token_, std::nullopt);
}

void LocalHolds::Hold::finish(LocalFinal final) {
  if (std::exchange(ended_, true)) return;
  holds_.end(key_, token_, std::move(final));
}

void LocalHolds::begin(const std::string& key, const std::string& token, std::string payload_hash) {
  live_.insert_or_assign(key, Live{token, std::move(payload_hash)});
}

void LocalHolds::end(const std::string& key, const std::string& token,
                     std::optional<LocalFinal> final) {
  if (auto it = live_.find(key); it != live_.end() && it->second.token == token) live_.erase(it);
  if (recent_.size() == kRecent) recent_.pop_front();
  recent_.push_back({token, std::move(final)});
  if (waiting_ > 0) waiter_.notify_all();
}

const LocalHolds::Ended* LocalHolds::recent(std::string_view token) const {
  // Newest first: a copy looks soon after its refusal.
  const auto it = std::find_if(recent_.rbegin(), recent_.rend(),
                               [&](const Ended& e) { return e.token == token; });
  return it == recent_.rend() ? nullptr : &*it;
}

bool LocalHolds::held(std::string_view key, std::string_view token) const {
  const auto it = live_.find(key);
  return it != live_.end() && it->second.token == token;
}

std::optional<std::string> LocalHolds::live_token(std::string_view key,
                                                  std::string_view payload_hash) const {
  const auto it = live_.find(key);
  if (it == live_.end() || it->second.payload_hash != payload_hash) return std::nullopt;
  return it->second.token;
}

bool LocalHolds::known_here(std::string_view key, std::string_view token) const {
  return held(key, token) || recent(token) != nullptr;
}

Task<LocalAwait> LocalHolds::await(std::string key, std::string token, Instant until) {
  if (!known_here(key, token)) co_return LocalAwait{.state = LocalHoldState::NotHeldHere};
  ++waiting_;
  while (held(key, token)) {
    if (clock_.now() >= until) break;
    const bool waited = co_await waiter_.wait_until(until);
    if (!waited) break;  // stopping
  }
  --waiting_;
  if (held(key, token)) co_return LocalAwait{.state = LocalHoldState::StillHeld};
  // Evicted while this copy woke (kRecent others ended meanwhile): not known, so not final.
  const Ended* ended = recent(token);
  if (ended == nullptr || !ended->final) co_return LocalAwait{.state = LocalHoldState::Released};
  co_return LocalAwait{.state = LocalHoldState::Final, .final = *ended->final};
}

}  // namespace ic::application
