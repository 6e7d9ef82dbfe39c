// What the fuzz targets share: the check that turns a broken property into a crash libFuzzer
// (and the replay test) reports, and HTTP replies read from the fuzz input for a
// testing::ScriptedTransport, so the AWS clients decode hostile replies through their real
// code paths.
//
// Every target is a plain function, linked either with libfuzzer_entry.cpp (the fuzz preset)
// or with replay_main.cpp (the normal build, where ctest replays corpus/ and regressions/):
//
//   int fuzz_one(const std::uint8_t* data, std::size_t size);
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <expected>
#include <string>
#include <string_view>

#include "core/time.hpp"
#include "http/http_transport.hpp"
#include "testing/clocks.hpp"
#include "testing/scripted_transport.hpp"

int fuzz_one(const std::uint8_t* data, std::size_t size);

// Unlike assert, active in every build type.
#define FUZZ_CHECK(condition)                                                                 \
  do {                                                                                        \
    if (!(condition)) {                                                                       \
      std::fprintf(stderr, "%s:%d: fuzz check failed: %s\n", __FILE__, __LINE__, #condition); \
      std::abort();                                                                           \
    }                                                                                         \
  } while (false)

namespace ic::fuzz {

using Reply = testing::ScriptedTransport::Step;

// The fuzz input after its first byte, as HTTP replies separated by "\n====\n". Each reply is a
// status line, "name: value" header lines up to an empty line, then the body. A status line of
// C, T or D stands for a transport failure instead (could not connect, timeout after sending,
// dropped connection); a status that is not a number reads as 200.
[[nodiscard]] std::deque<Reply> parse_replies(std::string_view script);

// A transport answering with the replies of `script`.
[[nodiscard]] inline testing::ScriptedTransport scripted(std::string_view script) {
  return testing::ScriptedTransport(parse_replies(script));
}

// What the targets' clocks (testing::ManualClock, never moved) read, so signing needs no real
// time.
inline constexpr Instant kFuzzNow{std::chrono::sys_days{std::chrono::November / 30 / 2026}};

// Code points of UTF-8 text (continuation bytes not counted).
[[nodiscard]] inline std::size_t code_points(std::string_view text) {
  std::size_t count = 0;
  for (const char c : text) count += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return count;
}

// The first byte picks what a target exercises; the rest is its input.
struct Selected {
  std::uint8_t choice = 0;
  std::string_view rest;
};
[[nodiscard]] inline Selected select(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return {};
  return {data[0], std::string_view(reinterpret_cast<const char*>(data) + 1, size - 1)};
}

}  // namespace ic::fuzz
