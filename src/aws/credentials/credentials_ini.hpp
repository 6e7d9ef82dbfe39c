// Parser for the SDKs' shared files (~/.aws/credentials, ~/.aws/config).
//
//   [profile dev]            ; a comment
//   region = eu-west-1       # comments after whitespace end the value
//   s3 =
//     max_concurrent_requests = 10   (indented: a sub-property, kept as part of `s3`)
//
// Sections are keyed by their trimmed name ("profile dev"); a section given twice is merged,
// later keys winning, as the SDKs do. Lines that are neither are ignored, not fatal: one bad
// line must not hide every profile.
#pragma once

#include <cstddef>
#include <expected>
#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ic::aws {

using IniSection = std::map<std::string, std::string, std::less<>>;
using IniFile = std::map<std::string, IniSection, std::less<>>;

[[nodiscard]] IniFile parse_ini(std::string_view text);

// Larger shared files are refused rather than read: a wrong path (a device, a log) must not
// make a refresh allocate without limit. Real ones, with hundreds of profiles, stay far below.
inline constexpr std::size_t kMaxIniFileBytes = 1024 * 1024;

// nullopt when there is no such file (absent files are normal: the profile is elsewhere); the
// error says why an existing file could not be used ("is larger than 1048576 bytes",
// "cannot be read: Permission denied"), naming neither the path nor any content.
[[nodiscard]] std::expected<std::optional<IniFile>, std::string> read_ini_file(
    const std::string& path);

}  // namespace ic::aws
