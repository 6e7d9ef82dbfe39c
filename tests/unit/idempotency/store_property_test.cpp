// Property: random interleavings of claim / complete / fail / release / extend / clock advance,
// by three workers over two keys, never give two live claims on one key, never let a non-holder
// write a final state and never change a final state.
#include <gtest/gtest.h>
#include <rapidcheck/gtest.h>

#include <array>
#include <map>
#include <optional>

#include "event/run_blocking.hpp"
#include "testing/in_memory_store.hpp"

namespace ic::idempotency {
namespace {

using namespace std::chrono_literals;

constexpr Millis kLease = 10s;
constexpr std::array<std::string_view, 2> kKeys = {"K1", "K2"};

enum class Op { Claim, RetryClaim, Complete, Fail, Extend, Release, Advance };

struct Step {
  Op op;
  int worker;
  int key;
  int millis;
  bool other_payload;
};

// What a worker believes after the store's answers: the claim it thinks it holds per key.
struct Belief {
  std::string token;
  Instant lease_until;
};

std::optional<ClaimRecord> snapshot(IdempotencyStore& store, std::string_view key) {
  auto record = event::run_blocking(store.get(key));
  RC_ASSERT(record.has_value());
  return *record;
}

void check_final_write(const std::optional<ClaimRecord>& before,
                       const std::optional<ClaimRecord>& after, WriteOutcome outcome,
                       const std::string& token) {
  if (outcome == WriteOutcome::Fenced) {
    RC_ASSERT(before == after);  // a refused write changes nothing
    return;
  }
  RC_ASSERT(before.has_value() && after.has_value());
  RC_ASSERT(before->claim_token == token);  // only the holder writes a final state
  RC_ASSERT(after->is_final());
  if (before->is_final()) RC_ASSERT(before == after);  // a retry rewrites nothing
}

RC_GTEST_PROP(StoreProperty, RandomInterleavingsKeepTheClaimInvariants, ()) {
  const auto steps = *rc::gen::container<std::vector<Step>>(rc::gen::build<Step>(
      rc::gen::set(&Step::op, rc::gen::element(Op::Claim, Op::RetryClaim, Op::Complete, Op::Fail,
                                               Op::Extend, Op::Release, Op::Advance)),
      rc::gen::set(&Step::worker, rc::gen::inRange(0, 3)),
      rc::gen::set(&Step::key, rc::gen::inRange(0, 2)),
      rc::gen::set(&Step::millis, rc::gen::inRange(0, 15'000)),
      rc::gen::set(&Step::other_payload, rc::gen::weightedElement<bool>({{9, false}, {1, true}}))));

  memory::InMemoryIdempotencyStore store(std::chrono::hours(1));
  Instant now{Millis{1'000'000}};
  int next_token = 0;
  std::map<std::pair<int, int>, Belief> beliefs;  // (worker, key) -> held claim
  std::map<int, ClaimRecord> finals;              // key -> first final record seen

  for (const Step& step : steps) {
    const std::string key(kKeys[static_cast<std::size_t>(step.key)]);
    const auto held = beliefs.find({step.worker, step.key});
    const std::string token =
        held != beliefs.end() ? held->second.token : "none-" + std::to_string(step.worker);
    const auto before = snapshot(store, key);

    switch (step.op) {
      case Op::Advance:
        now += Millis{step.millis};
        break;
      case Op::Claim:
      case Op::RetryClaim: {
        const std::string claim_token = step.op == Op::RetryClaim && held != beliefs.end()
                                            ? token
                                            : "t" + std::to_string(++next_token);
        auto result =
            event::run_blocking(store.claim({.key = key,
                                             .payload_hash = step.other_payload ? "h2" : "h1",
                                             .token = claim_token,
                                             .owner = std::to_string(step.worker),
                                             .now = now,
                                             .lease = kLease}));
        RC_ASSERT(result.has_value());
        if (result->outcome == ClaimOutcome::Acquired) {
          RC_ASSERT(!before || !before->is_final());
          beliefs[{step.worker, step.key}] = {claim_token, now + kLease};
        }
        break;
      }
      case Op::Complete:
      case Op::Fail: {
        auto outcome = event::run_blocking(
            step.op == Op::Complete ? store.complete(key, token, {"DEBITED", "D"}, now)
                                    : store.fail(key, token, {"FAILED_PERMANENT", "X"}, now));
        RC_ASSERT(outcome.has_value());
        check_final_write(before, snapshot(store, key), *outcome, token);
        beliefs.erase({step.worker, step.key});
        break;
      }
      case Op::Extend: {
        auto outcome = event::run_blocking(store.extend(key, token, now + kLease));
        RC_ASSERT(outcome.has_value());
        if (*outcome == WriteOutcome::Written) {
          RC_ASSERT(before && before->claim_token == token && !before->is_final());
          beliefs[{step.worker, step.key}].lease_until = now + kLease;
        } else {
          beliefs.erase({step.worker, step.key});
        }
        break;
      }
      case Op::Release: {
        auto outcome = event::run_blocking(store.release(key, token));
        RC_ASSERT(outcome.has_value());
        if (*outcome == WriteOutcome::Fenced) RC_ASSERT(before == snapshot(store, key));
        beliefs.erase({step.worker, step.key});
        break;
      }
    }

    // Never two live claims on one key: at most one worker believes in a live lease, and
    // that belief matches the store.
    for (int k = 0; k < static_cast<int>(kKeys.size()); ++k) {
      int live = 0;
      for (const auto& [owner, belief] : beliefs) {
        if (owner.second == k && belief.lease_until >= now) ++live;
      }
      RC_ASSERT(live <= 1);
      // A final record never changes once written.
      const auto record = snapshot(store, kKeys[static_cast<std::size_t>(k)]);
      if (auto it = finals.find(k); it != finals.end()) {
        RC_ASSERT(record.has_value() && *record == it->second);
      } else if (record && record->is_final()) {
        finals.emplace(k, *record);
      }
    }
  }
}

}  // namespace
}  // namespace ic::idempotency
