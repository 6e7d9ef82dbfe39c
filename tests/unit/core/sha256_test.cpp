// SHA-256 against FIPS 180-2 vectors, as one part or several, from several threads at once.
#include "core/sha256.hpp"

#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "core/hex.hpp"

namespace ic {
namespace {

constexpr std::string_view kAbcDigest =
    "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad";

TEST(Sha256, KnownVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), kAbcDigest);
  EXPECT_EQ(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
}

TEST(Sha256, PartsAreHashedAsOneMessage) {
  EXPECT_EQ(to_hex(sha256({"a", "", "bc"})), kAbcDigest);
  EXPECT_EQ(sha256({"ab", "c"}), sha256({"abc"}));
}

TEST(Sha256, ConcurrentCallersEachGetTheirOwnDigest) {
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        if (sha256_hex("abc") != kAbcDigest) ++wrong;
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(wrong, 0);
}

}  // namespace
}  // namespace ic
