// The in-memory reference store against the shared contract.
#include "testing/in_memory_store.hpp"

#include "testing/store_contract.hpp"

namespace ic::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(
    InMemory, StoreContract,
    ::testing::Values(StoreUnderTest{
        "in_memory",
        [] { return std::make_shared<memory::InMemoryIdempotencyStore>(kContractRetention); }}),
    [](const auto& test_info) { return test_info.param.name; });

}  // namespace
}  // namespace ic::testing
