// The IdempotencyStore contract (docs/design.md §3) as one value-parameterised suite. Every store
// instantiates it, so the in-memory reference and the DynamoDB adapter are held to the same
// cases:
//
//   INSTANTIATE_TEST_SUITE_P(Dynamo, StoreContract,
//                            ::testing::Values(StoreUnderTest{"dynamodb", make_store}));
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>

#include "idempotency/idempotency_store.hpp"

namespace ic::testing {

struct StoreUnderTest {
  std::string name;
  // Returns a store over an empty table; called once per test.
  std::function<std::shared_ptr<idempotency::IdempotencyStore>()> make;
};

inline std::string PrintToString(const StoreUnderTest& s) {
  return s.name;
}

class StoreContract : public ::testing::TestWithParam<StoreUnderTest> {
 protected:
  void SetUp() override { store_ = GetParam().make(); }

  std::shared_ptr<idempotency::IdempotencyStore> store_;
};

// The retention every contract store is built with.
inline constexpr std::chrono::seconds kContractRetention{30 * 24 * 3600};

}  // namespace ic::testing
