// The process's fencing tokens: 128 random bits each, drawn from OpenSSL a block at a time;
// no token repeats, across block boundaries and across a fork.
#include "app/system_adapters.hpp"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <set>
#include <string>
#include <thread>

namespace ic::app {
namespace {

bool is_lower_hex(const std::string& text) {
  return std::ranges::all_of(
      text, [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

TEST(RandomTokens, AreFreshAcrossSeveralDrawsOfTheBlock) {
  RandomTokens tokens;
  std::set<std::string> seen;
  const std::size_t count = 3 * RandomTokens::kTokensPerDraw + 1;
  for (std::size_t i = 0; i < count; ++i) {
    const std::string token = tokens.next();
    ASSERT_EQ(token.size(), 2 * RandomTokens::kTokenBytes);
    ASSERT_TRUE(is_lower_hex(token)) << token;
    ASSERT_TRUE(seen.insert(token).second) << "token " << i << " repeats: " << token;
  }
}

TEST(RandomTokens, ThreadsDrawTheirOwn) {
  RandomTokens tokens;
  std::set<std::string> mine;
  for (std::size_t i = 0; i < 4; ++i) mine.insert(tokens.next());
  std::set<std::string> theirs;
  std::thread([&] {
    for (std::size_t i = 0; i < 4; ++i) theirs.insert(tokens.next());
  }).join();
  for (const auto& token : theirs) EXPECT_FALSE(mine.contains(token)) << token;
}

// A child forked after the parent drew a block must not hand out the parent's next tokens.
TEST(RandomTokens, AForkedChildDoesNotRepeatTheParentsNextToken) {
  RandomTokens tokens;
  (void)tokens.next();  // the block is drawn and mostly unused
  std::array<int, 2> pipe_fds{};
  ASSERT_EQ(::pipe(pipe_fds.data()), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const std::string token = tokens.next();
    const bool written =
        ::write(pipe_fds[1], token.data(), token.size()) == static_cast<ssize_t>(token.size());
    ::_exit(written ? 0 : 1);
  }
  ::close(pipe_fds[1]);
  std::string from_child(2 * RandomTokens::kTokenBytes, '\0');
  const ssize_t got = ::read(pipe_fds[0], from_child.data(), from_child.size());
  ::close(pipe_fds[0]);
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  ASSERT_EQ(got, static_cast<ssize_t>(from_child.size()));
  EXPECT_NE(tokens.next(), from_child);
}

}  // namespace
}  // namespace ic::app
