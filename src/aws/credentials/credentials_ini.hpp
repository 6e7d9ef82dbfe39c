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

#include <map>
#include <optional>
#include <string>
#include <string_view>

namespace ic::aws {

using IniSection = std::map<std::string, std::string, std::less<>>;
using IniFile = std::map<std::string, IniSection, std::less<>>;

[[nodiscard]] IniFile parse_ini(std::string_view text);

// nullopt when the file cannot be opened (absent files are normal: the profile is elsewhere).
[[nodiscard]] std::optional<IniFile> read_ini_file(const std::string& path);

}  // namespace ic::aws
