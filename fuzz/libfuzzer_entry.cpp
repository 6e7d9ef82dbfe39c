// libFuzzer's entry point for one target (the fuzz preset); the target's body is fuzz_one.
#include "fuzz_support.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  return fuzz_one(data, size);
}
