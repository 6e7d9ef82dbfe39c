// What `run` says about itself when it starts, so a line in the log tells where this consumer
// talks to (an AWS_ENDPOINT_URL pointing elsewhere must be visible) and how it was configured.
#pragma once

#include <string>

#include "app/settings.hpp"

namespace ic::app {

// "WORKERS=8 RECEIVERS=1 AWS_ENDPOINT_URL=http://127.0.0.1:5000": every known setting whose
// effective value (flag over environment) differs from its default, in --help order. No value
// is a secret (tokens are read from files, which are named by path), but the user info of a URL
// is masked in case someone put a password there.
[[nodiscard]] std::string non_default_settings(const SettingsSource& settings);

// "https://user:pw@host/x" -> "https://***@host/x"; anything else unchanged.
[[nodiscard]] std::string mask_url_user_info(std::string value);

}  // namespace ic::app
