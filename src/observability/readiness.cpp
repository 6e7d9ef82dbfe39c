#include "observability/readiness.hpp"

#include <fmt/format.h>

#include <algorithm>

namespace ic::observability {
namespace {

constexpr std::size_t kMaxDetail = 200;

std::string bounded(std::string_view text) {
  return std::string(text.substr(0, kMaxDetail));
}

}  // namespace

Readiness::Readiness(const Clock& clock, std::vector<DependencySpec> specs,
                     ReadinessListener* listener)
    : clock_(clock), listener_(listener) {
  const Instant now = clock_.now();
  MutexLock lock(mutex_);
  for (auto& spec : specs) {
    State state{.spec = std::move(spec), .last_event = now};
    state.status.name = state.spec.name;
    state.status.up = state.spec.up_until_proven;
    if (!state.status.up) {
      state.status.code = "NotProbedYet";
      state.status.detail = "no answer yet";
    }
    states_.push_back(std::move(state));
  }
}

Readiness::State* Readiness::find(std::string_view name) {
  auto it = std::ranges::find(states_, name,
                              [](const State& s) -> const std::string& { return s.spec.name; });
  return it == states_.end() ? nullptr : &*it;
}

std::vector<std::string> Readiness::verdicts() const {
  std::vector<std::string> out;
  out.reserve(states_.size());
  for (const State& state : states_) out.push_back(state.status.up ? "" : state.status.code);
  return out;
}

void Readiness::succeeded(std::string_view dependency) {
  MutexLock lock(mutex_);
  State* state = find(dependency);
  if (state == nullptr) return;
  const Instant now = clock_.now();
  state->last_event = now;
  const bool recovers_another = std::ranges::any_of(states_, [&](const State& other) {
    return !other.status.up && other.spec.recovered_by == dependency;
  });
  // Every receive and store call lands here: when nothing changes, change nothing.
  if (state->status.up && state->failures == 0 && !recovers_another) return;
  const auto before = verdicts();
  state->failures = 0;
  state->status.up = true;
  state->status.code.clear();
  state->status.detail.clear();
  for (State& other : states_) {
    if (other.status.up || other.spec.recovered_by != dependency) continue;
    if (now - other.last_failure < other.spec.quiet_period) continue;
    other.failures = 0;
    other.status = {.name = other.spec.name, .up = true};
  }
  settle(before);
}

void Readiness::failed(std::string_view dependency, const Error& error) {
  MutexLock lock(mutex_);
  State* state = find(dependency);
  if (state == nullptr) return;
  const auto before = verdicts();
  const Instant now = clock_.now();
  state->last_event = now;
  state->last_failure = now;
  if (++state->failures >= state->spec.failures_to_down) {
    state->status.up = false;
    state->status.code = bounded(error.code);
    state->status.detail = bounded(error.message);
  }
  settle(before);
}

std::vector<DependencyStatus> Readiness::statuses() {
  MutexLock lock(mutex_);
  settle(verdicts());
  std::vector<DependencyStatus> out;
  out.reserve(states_.size());
  for (const State& state : states_) out.push_back(state.status);
  return out;
}

bool Readiness::ready() {
  MutexLock lock(mutex_);
  settle(verdicts());
  return std::ranges::all_of(states_, [](const State& s) { return s.status.up; });
}

void Readiness::settle(const std::vector<std::string>& before) {
  const Instant now = clock_.now();
  for (State& state : states_) {
    const Millis silence = state.spec.max_silence;
    if (!state.status.up || silence == Millis{0} || now - state.last_event <= silence) continue;
    state.status.up = false;
    state.status.code = "ProbeOverdue";
    state.status.detail =
        fmt::format("no answer for {} s", (now - state.last_event).count() / 1000);
  }
  if (listener_ == nullptr || verdicts() == before) return;
  std::vector<DependencyStatus> all;
  all.reserve(states_.size());
  for (const State& state : states_) all.push_back(state.status);
  listener_->on_readiness(all, std::ranges::all_of(all, &DependencyStatus::up));
}

}  // namespace ic::observability
