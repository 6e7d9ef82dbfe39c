// Credentials from an external program: the `credential_process` setting of a shared-config
// profile (credentials_profile.hpp decides when it applies). The program is run without a
// shell -- aws/command_line.hpp says how its line is split -- and must print, on stdout:
//
//   {"Version": 1, "AccessKeyId": "...", "SecretAccessKey": "...",
//    "SessionToken": "...", "Expiration": "2026-11-30T10:00:00Z"}
//
// SessionToken and Expiration are optional; without Expiration the keys are used until the
// process restarts, with it the chain runs the program again before they expire. A non-zero
// exit is an error quoting the first 200 printable characters of stderr; stdout, which holds
// the secret, is never quoted.
#pragma once

#include <expected>
#include <string_view>

#include "aws/credentials/credentials.hpp"
#include "aws/credentials/process_runner.hpp"

namespace ic::aws {

// The program's stdout as credentials; any other shape is InvalidCredentials naming the field
// at fault, never its value. A plain function of a string, so it can be fuzzed.
[[nodiscard]] std::expected<Credentials, AwsError> parse_process_output(std::string_view out);

// Splits `command`, runs it within `limits` and parses what it printed. A timeout is
// Retryable; everything else Permanent. Thread-safety: may be called concurrently.
[[nodiscard]] std::expected<Credentials, AwsError> process_credentials(
    std::string_view command, const ProcessLimits& limits = {});

}  // namespace ic::aws
