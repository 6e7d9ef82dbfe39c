// A resolver that never answers for one name: this test binary defines getaddrinfo, which
// libcurl's resolver thread then calls instead of glibc's (an executable's symbol comes first in
// the dynamic linker's search). Every other name goes to glibc's. For the name below the call
// blocks until release() (or 10 s, so a test that failed does not leave a thread behind forever).
#pragma once

#include <string_view>

namespace ic::testing {

inline constexpr std::string_view kSilentHost = "resolver-never-answers.invalid";

// Lookups of kSilentHost started and not answered yet.
[[nodiscard]] int silent_lookups_waiting();
// Lookups of kSilentHost started since the process began.
[[nodiscard]] int silent_lookups_started();
// Ends every waiting lookup (EAI_AGAIN) and every later one at once.
void release_silent_lookups();

}  // namespace ic::testing
