// Splits the `credential_process` command line of a shared-config profile into argv, for
// running it WITHOUT a shell (the SDKs differ: botocore splits it like this, the Java, Go and
// JavaScript SDKs hand it to `sh -c`). Accepted lines mean the same words to sh as to us;
// anything sh would expand or interpret is refused, so a line written for a shell never runs
// with a different meaning:
//
//   words are separated by unquoted spaces, tabs or line breaks;
//   '...'  is literal;
//   "..."  is literal except \" \\ \$ \` (the backslash goes) and backslash-newline (removed);
//          an unescaped $ or ` inside it is refused (sh would expand it);
//   \c     outside quotes is a literal c (backslash-newline is removed);
//   refused outside quotes: | & ; < > ( ) $ ` * ? [ (pipes, lists, redirections, expansions,
//          globs), # or ~ at the start of a word (comment, home directory), and in the
//          first word = (an assignment) or a leading ! (negation).
//
//   split_command_line(R"(/opt/bin/creds --profile "prod eu" --json)")
//     -> {"/opt/bin/creds", "--profile", "prod eu", "--json"}
//
// A plain function of a string, so it can be fuzzed; it never throws on any input.
#pragma once

#include <expected>
#include <string>
#include <string_view>
#include <vector>

namespace ic::aws {

// The words, at least one; otherwise a one-line reason that does not quote the line.
[[nodiscard]] std::expected<std::vector<std::string>, std::string> split_command_line(
    std::string_view line);

}  // namespace ic::aws
